-- title: Insert, ascending int8 keys from a sequence (rightmost leaf splits)
-- data: ins_asc
-- reset: ins_asc
-- index: ins_asc_@side@ ins_asc_@side@_idx
-- expect: Insert on ins_asc_@side@
INSERT INTO ins_asc_@side@ (k, v) VALUES (nextval('ins_asc_@side@_seq'), 1);
