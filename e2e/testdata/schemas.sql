CREATE DATABASE sc;
USE sc;
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, rid INT, what VARCHAR(20), at_v INT);
CREATE TABLE tr (id INT PRIMARY KEY, v INT, note VARCHAR(20));
CREATE TABLE counts (k VARCHAR(10) PRIMARY KEY, n INT NOT NULL);
INSERT INTO counts VALUES ('ins', 0), ('upd', 0), ('del', 0);
DELIMITER //
CREATE TRIGGER tr_bi BEFORE INSERT ON tr FOR EACH ROW SET NEW.note = CONCAT('bi:', COALESCE(NEW.note, ''))//
CREATE DEFINER=`root`@`localhost` TRIGGER tr_ai AFTER INSERT ON tr FOR EACH ROW BEGIN INSERT INTO audit (rid, what, at_v) VALUES (NEW.id, 'ins', NEW.v); UPDATE counts SET n = n + 1 WHERE k = 'ins'; END//
CREATE TRIGGER tr_bu BEFORE UPDATE ON tr FOR EACH ROW SET NEW.v = NEW.v * 10//
CREATE TRIGGER tr_au AFTER UPDATE ON tr FOR EACH ROW BEGIN INSERT INTO audit (rid, what, at_v) VALUES (NEW.id, 'upd', NEW.v); UPDATE counts SET n = n + 1 WHERE k = 'upd'; END//
CREATE TRIGGER tr_bd BEFORE DELETE ON tr FOR EACH ROW UPDATE counts SET n = n + 100 WHERE k = 'del'//
CREATE TRIGGER tr_ad AFTER DELETE ON tr FOR EACH ROW INSERT INTO audit (rid, what, at_v) VALUES (OLD.id, 'del', OLD.v)//
DELIMITER ;
INSERT INTO tr VALUES (1, 5, 'a'), (2, 6, NULL), (3, 7, 'c');
UPDATE tr SET v = v + 1 WHERE id <= 2;
DELETE FROM tr WHERE id = 3;
INSERT INTO tr VALUES (4, 8, 'd');
BEGIN; UPDATE tr SET v = 1 WHERE id = 4; DELETE FROM tr WHERE id = 1; COMMIT;

-- Foreign key chains.
CREATE TABLE fk_a (id INT PRIMARY KEY, name VARCHAR(10));
CREATE TABLE fk_b (id INT PRIMARY KEY, a_id INT, v INT, FOREIGN KEY (a_id) REFERENCES fk_a (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE fk_c (id INT PRIMARY KEY, b_id INT, FOREIGN KEY (b_id) REFERENCES fk_b (id) ON DELETE SET NULL ON UPDATE CASCADE);
CREATE TABLE fk_d (id INT PRIMARY KEY, a_id INT, FOREIGN KEY (a_id) REFERENCES fk_a (id) ON DELETE SET NULL ON UPDATE SET NULL);
INSERT INTO fk_a VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four');
INSERT INTO fk_b VALUES (10, 1, 1), (11, 1, 2), (20, 2, 3), (30, 3, 4), (40, 4, 5);
INSERT INTO fk_c VALUES (100, 10), (101, 11), (200, 20), (300, 30), (400, 40);
INSERT INTO fk_d VALUES (1000, 1), (1001, 2), (1002, 3), (1003, 4);
DELETE FROM fk_a WHERE id = 1;
UPDATE fk_a SET id = 22 WHERE id = 2;
UPDATE fk_b SET id = 31 WHERE id = 30;
DELETE FROM fk_b WHERE id = 20;
-- A session with foreign key checks off: no cascade on the source.
SET foreign_key_checks = 0;
DELETE FROM fk_a WHERE id = 3;
UPDATE fk_a SET id = 44 WHERE id = 4;
INSERT INTO fk_b VALUES (50, 99, 9);
SET foreign_key_checks = 1;
INSERT INTO fk_a VALUES (5, 'five');
INSERT INTO fk_b VALUES (51, 5, 0);
INSERT INTO fk_c VALUES (500, 51);
DELETE FROM fk_a WHERE id = 5;

-- Generated columns.
CREATE TABLE gen (id INT PRIMARY KEY, a INT, b VARCHAR(20), s INT AS (a * 2) STORED, vv VARCHAR(30) AS (CONCAT(b, '!')) VIRTUAL, vi INT AS (a + 1) VIRTUAL, KEY (vi));
CREATE TABLE gen_nopk (a INT, s INT AS (a * 3) STORED, vv INT AS (a - 1) VIRTUAL);
INSERT INTO gen (id, a, b) VALUES (1, 5, 'x'), (2, 6, NULL), (3, 7, 'z');
UPDATE gen SET a = a + 10 WHERE id <= 2;
UPDATE gen SET b = 'q' WHERE id = 3;
DELETE FROM gen WHERE id = 1;
INSERT INTO gen_nopk (a) VALUES (1), (2), (2), (NULL);
UPDATE gen_nopk SET a = 20 WHERE a = 2 LIMIT 1;
DELETE FROM gen_nopk WHERE a IS NULL;

-- System versioning.
CREATE TABLE ver (id INT PRIMARY KEY, x INT, s VARCHAR(10)) WITH SYSTEM VERSIONING;
CREATE TABLE ver_e (id INT PRIMARY KEY, x INT, rs TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE, re TIMESTAMP(6) GENERATED ALWAYS AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME (rs, re)) WITH SYSTEM VERSIONING;
INSERT INTO ver VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
INSERT INTO ver_e VALUES (1, 10), (2, 20);
UPDATE ver SET x = x + 1 WHERE id <= 2;
UPDATE ver SET s = 'bb' WHERE id = 2;
DELETE FROM ver WHERE id = 3;
BEGIN; UPDATE ver SET x = 100 WHERE id = 1; UPDATE ver_e SET x = x * 2; DELETE FROM ver_e WHERE id = 1; COMMIT;
INSERT INTO ver VALUES (3, 33, 'c2');
