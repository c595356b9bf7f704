-- The sample shipped in testdata/shop.binlog: a small shop whose schema
-- changes while it runs, then a table is dropped. Read it with
--   binlogcdc read testdata/shop.binlog
CREATE DATABASE shop;
USE shop;
CREATE TABLE customers (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(120) NOT NULL,
  name VARCHAR(80) CHARACTER SET latin1,
  tier ENUM('basic','gold','platinum') NOT NULL DEFAULT 'basic',
  tags SET('new','vip','wholesale'),
  created DATETIME(6) NOT NULL
);
CREATE TABLE orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  note TEXT,
  placed TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  payload JSON
);
INSERT INTO customers (email, name, tier, tags, created) VALUES
  ('ana@example.com', 'Ana Müller', 'gold', 'vip', '2024-06-15 12:34:56.123456'),
  ('bo@example.com', 'Bø', 'basic', 'new,wholesale', '2024-06-16 08:00:00');
BEGIN;
INSERT INTO orders (customer_id, total, note, placed, payload) VALUES
  (1, 999.99, 'first order 🎉', '2024-06-15 12:40:00.250', '{"items": 3, "gift": true}'),
  (2, -0.50, NULL, '2024-06-16 09:00:00', NULL);
UPDATE customers SET tier = 'platinum', tags = 'vip,wholesale' WHERE id = 1;
COMMIT;
ALTER TABLE customers RENAME COLUMN name TO full_name, ADD COLUMN phone VARCHAR(20) NULL AFTER email;
UPDATE customers SET phone = '+49 30 1234' WHERE id = 1;
DELETE FROM orders WHERE id = 2;
CREATE TABLE scratch (k VARCHAR(10), v INT);
INSERT INTO scratch VALUES ('a', 1), ('b', NULL);
DROP TABLE scratch;
