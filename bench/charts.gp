# bench/charts.gp
#	PNG charts of a bench/run.sh --suite run, drawn by gnuplot (pngcairo).
#
# bench/run.sh calls it with -e "datadir='...'; out='FILE.png'; names='...';
# clients='...'; chart='tps|ratio|probe'" after writing in datadir:
#	tps.dat        one block per workload (in the order of names), a line
#	               per client count: clients, btree median min max,
#	               fastbtree median min max
#	ratio.dat      a line per workload: name, then per client count the
#	               median ratio fastbtree/btree and its min and max
#	probe.dat      key type, ns/probe of btree, fastbtree off, fastbtree on
#	callgrind.dat  key type, instructions/probe of the same three, then
#	               index-layer instructions/probe of the same three
#
# bench/scaling.sh calls it with chart='scaling' and configs='btree off ...'
# after writing scaling.dat: one block per workload (in the order of
# names), a line per client count: clients, then per configuration tps
# median min max.

btree_color = '#1f77b4'
fbt_color = '#d62728'
off_color = '#ff9896'

if (chart eq 'tps') {
	n = words(names)
	cols = (n > 6) ? 4 : ((n > 2) ? 3 : n)
	rows = int((n + cols - 1) / cols)
	set terminal pngcairo noenhanced size (cols * 420), (rows * 300 + 40) font 'DejaVu Sans,9'
	set output out
	cmin = real(word(clients, 1))
	cmax = real(word(clients, words(clients)))
	set multiplot layout rows, cols title 'tps by client count: median, bars = min–max of the runs'
	set logscale x 2
	set xrange [cmin / 1.5 : cmax * 1.5]
	set xtics (0)
	do for [c = 1 : words(clients)] {
		set xtics add (word(clients, c) real(word(clients, c)))
	}
	set yrange [0 : *]
	set key bottom right
	set grid ytics
	set xlabel 'clients'
	set format y '%.0f'
	do for [i = 1 : n] {
		set title word(names, i)
		plot datadir . '/tps.dat' index (i - 1) using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb btree_color title 'btree', \
			'' index (i - 1) using 1:5:6:7 with yerrorlines lw 2 pt 5 lc rgb fbt_color title 'fastbtree'
	}
	unset multiplot
}

if (chart eq 'ratio') {
	n = words(names)
	nc = words(clients)
	set terminal pngcairo noenhanced size (300 + n * 70 * nc), 480 font 'DejaVu Sans,10'
	set output out
	set title "tps ratio fastbtree/btree per workload: median of pairs, bars = min–max\nabove 1: fastbtree is faster"
	set linetype 1 lc rgb '#2ca02c'
	set linetype 2 lc rgb '#9467bd'
	set linetype 3 lc rgb '#ff7f0e'
	set linetype 4 lc rgb '#8c564b'
	set style data histograms
	set style histogram errorbars gap 1 lw 1
	set style fill solid 0.7 border -1
	set boxwidth 0.9
	set xtics rotate by -35 nomirror
	set yrange [0 : *]
	set grid ytics
	set key below
	set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb 'black'
	plot for [j = 1 : nc] datadir . '/ratio.dat' using (column(3 * j - 1)):(column(3 * j)):(column(3 * j + 1)):xtic(1) \
		title sprintf('%s client%s', word(clients, j), (word(clients, j) eq '1') ? '' : 's')
}

if (chart eq 'probe') {
	hascg = (system('test -s ' . datadir . '/callgrind.dat && echo 1 || echo 0') + 0)
	hasprobe = (system('test -s ' . datadir . '/probe.dat && echo 1 || echo 0') + 0)
	panels = hascg + hasprobe
	set terminal pngcairo noenhanced size (panels * 620), 440 font 'DejaVu Sans,10'
	set output out
	set multiplot layout 1, panels
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set boxwidth 0.9
	set xtics rotate by -30 nomirror
	set yrange [0 : *]
	set grid ytics
	set key below
	if (hasprobe) {
		set title 'fastbtree_probe(): ns per probe (median, wall clock)'
		plot datadir . '/probe.dat' using 2:xtic(1) lc rgb btree_color title 'btree', \
			'' using 3 lc rgb off_color title 'fastbtree, fast_compare off', \
			'' using 4 lc rgb fbt_color title 'fastbtree, fast_compare on'
	}
	if (hascg) {
		# bars drawn by hand so that the index-layer part can overlay each one
		stats datadir . '/callgrind.dat' using 2 nooutput
		set title 'callgrind: instructions per probe (hatched: index layer, without the buffer manager)'
		set xrange [-0.6 : STATS_records - 0.4]
		set boxwidth 0.27 absolute
		plot datadir . '/callgrind.dat' using ($0 - 0.28):2:xtic(1) with boxes fs solid 0.8 lc rgb btree_color title 'btree', \
			'' using 0:3 with boxes fs solid 0.8 lc rgb off_color title 'fastbtree, fast_compare off', \
			'' using ($0 + 0.28):4 with boxes fs solid 0.8 lc rgb fbt_color title 'fastbtree, fast_compare on', \
			'' using ($0 - 0.28):5 with boxes fs transparent pattern 4 lc rgb 'black' title 'index layer', \
			'' using 0:6 with boxes fs transparent pattern 4 lc rgb 'black' notitle, \
			'' using ($0 + 0.28):7 with boxes fs transparent pattern 4 lc rgb 'black' notitle
	}
	unset multiplot
}

if (chart eq 'scaling') {
	n = words(names)
	nconf = words(configs)
	set terminal pngcairo noenhanced size (n * 560), 440 font 'DejaVu Sans,9'
	set output out
	cmin = real(word(clients, 1))
	cmax = real(word(clients, words(clients)))
	set multiplot layout 1, n title 'tps against clients: median of the rounds, bars = min–max'
	set logscale x 2
	set xrange [cmin / 1.5 : cmax * 1.5]
	set xtics (0)
	do for [c = 1 : words(clients)] {
		set xtics add (word(clients, c) real(word(clients, c)))
	}
	set yrange [0 : *]
	set key bottom right
	set grid ytics
	set xlabel 'clients'
	set format y '%.0f'
	set linetype 1 lc rgb btree_color lw 2 pt 7
	set linetype 2 lc rgb off_color lw 2 pt 5
	set linetype 3 lc rgb '#2ca02c' lw 2 pt 9
	set linetype 4 lc rgb '#9467bd' lw 2 pt 11
	set linetype 5 lc rgb '#ff7f0e' lw 2 pt 13
	set linetype 6 lc rgb '#8c564b' lw 2 pt 15
	set linetype 7 lc rgb fbt_color lw 2 pt 3
	do for [i = 1 : n] {
		set title word(names, i)
		plot for [j = 1 : nconf] datadir . '/scaling.dat' index (i - 1) \
			using 1:(column(3 * j - 1)):(column(3 * j)):(column(3 * j + 1)) with yerrorlines lt j \
			title (word(configs, j) eq 'btree' ? 'btree' : 'fastbtree ' . word(configs, j))
	}
	unset multiplot
}
