-- TPC-H supplier rows :lo .. :hi (s_suppkey = row number)
INSERT INTO supplier
SELECT i, 'Supplier#' || lpad(i::text, 9, '0'), gen_astr(i, 701, 10, 40), n, gen_phone(i, 704, n),
       (gen_u(i, 707, 1099999) - 99999) / 100.0, gen_text(i, 708, 25, 100)
FROM (SELECT i, gen_u(i, 703, 25) AS n FROM generate_series(:lo::int8, :hi::int8) i OFFSET 0) s;
