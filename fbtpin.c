/*-------------------------------------------------------------------------
 *
 * fbtpin.c
 *	  Atomic pins: pinning a shared buffer whose block we know (a
 *	  recent-buffer hint) with one compare-and-swap on the buffer's state,
 *	  outside the buffer manager's private reference counts, and without
 *	  the buffer-header spinlock that ReadRecentBuffer() takes for a buffer
 *	  the backend has not pinned yet.  The only module that touches buffer
 *	  internals (storage/buf_internals.h); README.design, "Pins".
 *
 * What it copies, and from where: the pin is PinBuffer()'s CAS loop
 * (refcount + 1, usage count + 1 up to BM_MAX_USAGE_COUNT, waiting with
 * backoff while another backend holds the header spinlock), done only on
 * a state with BM_VALID, followed by PostgreSQL 19's check after the pin
 * (ReadRecentBuffer() through PinBuffer(skip_if_not_valid)): the buffer
 * tag is read after the pin, which keeps it stable, and a buffer that
 * does not hold the block is unpinned again.  The unpin is UnpinBuffer()'s CAS
 * loop, and then, as UnpinBuffer() does, the wakeup of a backend waiting
 * in LockBufferForCleanup() for the pin count to drop to its own pin
 * (WakePinCountWaiter() on 18).
 *
 * Invariants relied on (PostgreSQL 15 to 18; on 19 and later the module
 * pins nothing and the callers use ReadRecentBuffer(), which no longer
 * takes the spinlock there):
 *   - A valid shared buffer loses its tag (and BM_VALID) only under its
 *     header spinlock, after checking there that its refcount is 0
 *     (InvalidateBuffer()) or the replacing backend's own single pin
 *     (BufferAlloc() on 15, InvalidateVictimBuffer() since 16); since 16
 *     the replacer then sets the new tag later, asserting that refcount,
 *     so a buffer without BM_VALID must not be pinned at all.  So a CAS
 *     that raised the refcount of a state with BM_VALID keeps the tag
 *     read afterwards until we unpin.
 *   - Everything else that changes the state word either holds the header
 *     spinlock (BM_LOCKED; it then writes the word without a CAS, hence we
 *     never CAS while BM_LOCKED is set) or uses a CAS itself.
 *   - The content lock of a shared buffer is the LWLock
 *     BufferDescriptorGetContentLock(); LockBuffer() is nothing more, but
 *     asserts a private pin, so pages pinned here are locked through
 *     fbt_atomic_lockbuf().
 *   - BM_PIN_COUNT_WAITER with wait_backend_pgprocno is how
 *     LockBufferForCleanup() waits; whoever drops the refcount to 1 must
 *     clear the flag under the header spinlock and signal the waiter.
 *
 * Bufmgr does not know these pins, so this module accounts for them: each
 * pin has a slot recording the buffer and CurrentResourceOwner when it was
 * taken.  The holder releases it with fbt_atomic_unpin() (descents, scans
 * at amendscan); an error, a subtransaction abort, or the end of a portal
 * releases what is left of that resource owner's (a resource-release
 * callback, RESOURCE_RELEASE_BEFORE_LOCKS, as bufmgr releases its pins),
 * with a warning at commit, where a pin left over is a leak; backend exit,
 * FATAL included, releases every pin (before_shmem_exit).  One leaked
 * shared pin would make DROP INDEX, TRUNCATE and a checkpoint-less
 * DropRelationBuffers() wait forever.
 *
 * Rules for callers: an atomically pinned page is an internal page on the
 * descent path, read optimistically or share-locked with
 * fbt_atomic_lockbuf(), or the leaf a scan share-locks, reads and releases
 * at once (_fbt_pinleaf(), _fbt_start_at(); not in recovery); it is never
 * given to code that calls bufmgr functions asserting a private pin
 * (LockBuffer(), BufferGetBlockNumber(), BufferGetLSNAtomic(),
 * ReleaseBuffer(), MarkBufferDirty()); use FbtBufferGetBlockNumber() and
 * FbtBufferGetLSNAtomic().  No
 * code path of this backend takes a cleanup lock or drops the buffers of
 * a relation while it holds an atomic pin on it: VACUUM cleanup-locks
 * leaves only and runs outside any scan of this backend, and DROP,
 * TRUNCATE and REINDEX refuse a relation this backend has open
 * (CheckTableNotInUse()).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/s_lock.h"
#include "utils/memdebug.h"
#include "utils/resowner.h"

#include "fastbtree.h"

bool		fbt_atomic_pins = true;

#if FBT_HAVE_ATOMIC_PIN

/*
 * The slots.  A backend holds at most _fbt_scan_pin_budget() (64) pins for
 * its scans' lifetimes and a few for each descent in progress (descents
 * nest only when a comparison function runs a query); when every slot is
 * taken, callers pin through the buffer manager instead.
 */
#define FBT_APIN_SLOTS	256

typedef struct FbtApinSlot
{
	Buffer		buf;			/* InvalidBuffer: free */
	ResourceOwner owner;		/* CurrentResourceOwner when pinned */
} FbtApinSlot;

static FbtApinSlot apin_slots[FBT_APIN_SLOTS];
static int16 apin_free[FBT_APIN_SLOTS];	/* stack of free slot numbers */
static int	apin_nfree = 0;
static int	apin_used = 0;		/* slots taken */
static bool apin_ready = false;

/* Wait while another backend holds the buffer header spinlock */
static uint32
fbt_wait_hdr_unlocked(BufferDesc *hdr)
{
	SpinDelayStatus delay;
	uint32		state;

	init_local_spin_delay(&delay);
	state = pg_atomic_read_u32(&hdr->state);
	while (state & BM_LOCKED)
	{
		perform_spin_delay(&delay);
		state = pg_atomic_read_u32(&hdr->state);
	}
	finish_spin_delay(&delay);
	return state;
}

/*
 * Drop one pin from hdr's refcount, and wake a backend waiting for a
 * cleanup lock if ours was the last pin but its own (UnpinBuffer()).
 */
static void
fbt_unpin_shared(BufferDesc *hdr)
{
	uint32		old_state = pg_atomic_read_u32(&hdr->state);
	uint32		state;

	for (;;)
	{
		if (old_state & BM_LOCKED)
			old_state = fbt_wait_hdr_unlocked(hdr);
		Assert(BUF_STATE_GET_REFCOUNT(old_state) > 0);
		state = old_state - BUF_REFCOUNT_ONE;
		if (pg_atomic_compare_exchange_u32(&hdr->state, &old_state, state))
			break;
	}

	if (state & BM_PIN_COUNT_WAITER)
	{
		/* re-checked under the header lock: someone may have woken it */
		state = LockBufHdr(hdr);
		if ((state & BM_PIN_COUNT_WAITER) &&
			BUF_STATE_GET_REFCOUNT(state) == 1)
		{
			int			waiter = hdr->wait_backend_pgprocno;

			state &= ~BM_PIN_COUNT_WAITER;
			UnlockBufHdr(hdr, state);
			ProcSendSignal(waiter);
		}
		else
			UnlockBufHdr(hdr, state);
	}
}

/* Release slot's pin and free the slot */
static void
fbt_apin_release_slot(int slot)
{
	Buffer		buf = apin_slots[slot].buf;

	apin_slots[slot].buf = InvalidBuffer;
	apin_slots[slot].owner = NULL;
	apin_free[apin_nfree++] = (int16) slot;
	apin_used--;
	fbt_unpin_shared(GetBufferDescriptor(buf - 1));
}

/*
 * Resource-release callback: release the pins of the resource owner being
 * released (CurrentResourceOwner during the callback), as bufmgr releases
 * its own in the same phase.  At commit a pin still held is a leak of
 * ours: warned about, as bufmgr warns about its own.
 */
static void
fbt_apin_resowner_release(ResourceReleasePhase phase, bool isCommit,
						  bool isTopLevel, void *arg)
{
	int			slot;

	if (phase != RESOURCE_RELEASE_BEFORE_LOCKS || apin_used == 0)
		return;
	for (slot = 0; slot < FBT_APIN_SLOTS && apin_used > 0; slot++)
	{
		/*
		 * The top transaction's owner is released last: a pin still held
		 * then (taken under an owner already released) is released too.
		 */
		if (apin_slots[slot].buf != InvalidBuffer &&
			(apin_slots[slot].owner == CurrentResourceOwner ||
			 (isTopLevel && CurrentResourceOwner == TopTransactionResourceOwner)))
		{
			if (isCommit)
				elog(WARNING, "fastbtree: atomic pin of buffer %d leaked",
					 apin_slots[slot].buf);
			fbt_apin_release_slot(slot);
		}
	}
}

/* Backend exit, FATAL included: release every pin left */
static void
fbt_apin_exit(int code, Datum arg)
{
	int			slot;

	for (slot = 0; slot < FBT_APIN_SLOTS && apin_used > 0; slot++)
	{
		if (apin_slots[slot].buf != InvalidBuffer)
			fbt_apin_release_slot(slot);
	}
}

/* First use in this backend: the free list and the release callbacks */
static void
fbt_apin_setup(void)
{
	int			i;

	for (i = 0; i < FBT_APIN_SLOTS; i++)
	{
		apin_slots[i].buf = InvalidBuffer;
		apin_free[i] = (int16) (FBT_APIN_SLOTS - 1 - i);
	}
	apin_nfree = FBT_APIN_SLOTS;
	RegisterResourceReleaseCallback(fbt_apin_resowner_release, NULL);
	before_shmem_exit(fbt_apin_exit, (Datum) 0);
	apin_ready = true;
}

/*
 * fbt_atomic_pin() -- pin buf if it holds block blkno of rel's main fork.
 *
 * buf: a shared buffer number from a recent-buffer hint (any value in
 * 1..NBuffers; nothing is assumed about what it holds).  Returns the pin's
 * slot (>= 0) when buf holds the block and is valid, with buf pinned (one
 * CAS on its state; its usage count raised as PinBuffer() raises it) and
 * the pin recorded under CurrentResourceOwner; the caller releases it with
 * fbt_atomic_unpin().  Returns FBT_APIN_NONE, holding nothing, when buf
 * holds something else or is not valid, when every slot is taken, when
 * there is no resource owner, or on a major without atomic pins; the
 * caller then reads the block through the buffer manager.  No lock is
 * taken; it waits (spinning with backoff) only while another backend
 * holds buf's header spinlock.  Raises no error.  Counts a hit in
 * pgBufferUsage as ReadRecentBuffer() does.
 */
int
fbt_atomic_pin(Relation rel, BlockNumber blkno, Buffer buf)
{
	BufferDesc *hdr;
	BufferTag	tag;
	uint32		old_state;
	uint32		state;
	int			slot;

	if (unlikely(!apin_ready))
		fbt_apin_setup();
	if (apin_nfree == 0 || CurrentResourceOwner == NULL ||
		buf < 1 || buf > NBuffers)
		return FBT_APIN_NONE;

	hdr = GetBufferDescriptor(buf - 1);

	/*
	 * A hint to a buffer since reused for another page usually shows in its
	 * tag: read without a pin, which may see it torn or changing, it only
	 * spares us the two CAS of pinning and unpinning a buffer that is not
	 * ours; the check after the pin decides.
	 */
	fbt_init_buffer_tag(&tag, rel, blkno);
	if (!fbt_buffer_tags_equal(&tag, &hdr->tag))
		return FBT_APIN_NONE;
	old_state = pg_atomic_read_u32(&hdr->state);
	for (;;)
	{
		if (old_state & BM_LOCKED)
			old_state = fbt_wait_hdr_unlocked(hdr);

		/*
		 * Never pin a buffer that is not valid (PostgreSQL 19's
		 * PinBuffer(skip_if_not_valid)): since 16 a buffer being replaced
		 * has its tag cleared and BM_VALID off while the replacer's pin is
		 * the only one, and the replacer sets the new tag asserting that
		 * refcount; the CAS fails if BM_VALID went off meanwhile.
		 */
		if (!(old_state & BM_VALID))
			return FBT_APIN_NONE;
		state = old_state + BUF_REFCOUNT_ONE;
		if (BUF_STATE_GET_USAGECOUNT(state) < BM_MAX_USAGE_COUNT)
			state += BUF_USAGECOUNT_ONE;
		if (pg_atomic_compare_exchange_u32(&hdr->state, &old_state, state))
			break;
	}

	/*
	 * Pinned while valid (the CAS is a full barrier): the tag cannot change
	 * until we unpin, since replacing or invalidating a valid buffer first
	 * checks, under the header spinlock, that no other pin exists.
	 */
	pg_read_barrier();
	if (!fbt_buffer_tags_equal(&tag, &hdr->tag))
	{
		fbt_unpin_shared(hdr);
		return FBT_APIN_NONE;
	}

	slot = apin_free[--apin_nfree];
	apin_slots[slot].buf = buf;
	apin_slots[slot].owner = CurrentResourceOwner;
	apin_used++;
	VALGRIND_MAKE_MEM_DEFINED(BufHdrGetBlock(hdr), BLCKSZ);
	pgBufferUsage.shared_blks_hit++;
	fbt_count_io_hit();
	return slot;
}

/*
 * fbt_atomic_unpin() -- release the atomic pin slot on buf.
 *
 * slot: what fbt_atomic_pin() returned for buf, not yet released.  The
 * caller holds no content lock on buf.  One CAS on buf's state; when a
 * backend waits for a cleanup lock on buf and ours was the last pin but
 * its own, it is woken (taking the header spinlock, as UnpinBuffer()
 * does).  A slot that does not hold buf is a bug of ours: elog(ERROR),
 * nothing released.
 */
void
fbt_atomic_unpin(int slot, Buffer buf)
{
	if (unlikely(slot < 0 || slot >= FBT_APIN_SLOTS ||
				 apin_slots[slot].buf != buf))
		elog(ERROR, "fastbtree: atomic pin slot %d does not hold buffer %d",
			 slot, buf);
	fbt_apin_release_slot(slot);
}

/*
 * fbt_atomic_lockbuf() -- LockBuffer() for a buffer we pinned atomically.
 *
 * buf: pinned by fbt_atomic_pin(); mode: BUFFER_LOCK_SHARE,
 * BUFFER_LOCK_EXCLUSIVE or BUFFER_LOCK_UNLOCK.  Takes or releases the
 * buffer's content lock (an LWLock), as LockBuffer() does, without
 * LockBuffer()'s assertion of a private pin.  Errors as LWLockAcquire().
 */
void
fbt_atomic_lockbuf(Buffer buf, int mode)
{
	LWLock	   *lock = BufferDescriptorGetContentLock(GetBufferDescriptor(buf - 1));

	if (mode == BUFFER_LOCK_UNLOCK)
		LWLockRelease(lock);
	else
		LWLockAcquire(lock, mode == BUFFER_LOCK_SHARE ? LW_SHARED : LW_EXCLUSIVE);
}

#else							/* !FBT_HAVE_ATOMIC_PIN */

int
fbt_atomic_pin(Relation rel, BlockNumber blkno, Buffer buf)
{
	return FBT_APIN_NONE;
}

void
fbt_atomic_unpin(int slot, Buffer buf)
{
	elog(ERROR, "fastbtree: no atomic pins on this major");
}

void
fbt_atomic_lockbuf(Buffer buf, int mode)
{
	LockBuffer(buf, mode);
}

#endif							/* FBT_HAVE_ATOMIC_PIN */

/*
 * FbtBufferGetBlockNumber() -- BufferGetBlockNumber() for a buffer pinned
 * either way (bufmgr's asserts a private pin).  buf: a pinned buffer.
 * Returns its block number.  No errors.
 */
BlockNumber
FbtBufferGetBlockNumber(Buffer buf)
{
	if (BufferIsLocal(buf))
		return BufferGetBlockNumber(buf);
	return GetBufferDescriptor(buf - 1)->tag.blockNum;
}

/*
 * FbtBufferGetLSNAtomic() -- BufferGetLSNAtomic() for a buffer pinned
 * either way (bufmgr's asserts a private pin).  buf: pinned, and at least
 * share-locked by us.  Returns the page's LSN; where hint bits are
 * WAL-logged (checksums, wal_log_hints) a share-locked page's LSN can be
 * set concurrently (MarkBufferDirtyHint()), so it is read under the buffer
 * header spinlock, as bufmgr does.  No errors.
 */
XLogRecPtr
FbtBufferGetLSNAtomic(Buffer buf)
{
#if FBT_HAVE_ATOMIC_PIN
	BufferDesc *hdr;
	uint32		state;
	XLogRecPtr	lsn;

	if (!XLogHintBitIsNeeded() || BufferIsLocal(buf))
		return PageGetLSN(BufferGetPage(buf));
	hdr = GetBufferDescriptor(buf - 1);
	state = LockBufHdr(hdr);
	lsn = PageGetLSN(BufferGetPage(buf));
	UnlockBufHdr(hdr, state);
	return lsn;
#else
	return BufferGetLSNAtomic(buf);
#endif
}
