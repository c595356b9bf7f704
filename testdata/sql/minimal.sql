-- Row images without some columns (binlog_row_image=MINIMAL, NOBLOB):
-- absent columns must never read as NULL. The source of
-- testdata/minimal.binlog.
CREATE DATABASE m;
USE m;
CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c BLOB);
SET SESSION binlog_row_image = 'MINIMAL';
INSERT INTO t VALUES (1, NULL, 'x', 0x01), (2, 2, NULL, NULL);
UPDATE t SET a = 5 WHERE id = 1;
UPDATE t SET b = NULL WHERE id = 2;
DELETE FROM t WHERE id = 1;
SET SESSION binlog_row_image = 'NOBLOB';
UPDATE t SET a = 7 WHERE id = 2;
