-- TPC-H customer rows :lo .. :hi (c_custkey = row number)
INSERT INTO customer
SELECT i, 'Customer#' || lpad(i::text, 9, '0'), gen_astr(i, 801, 10, 40), n, gen_phone(i, 804, n),
       (gen_u(i, 807, 1099999) - 99999) / 100.0,
       gen_pick(i, 808, '{AUTOMOBILE,BUILDING,FURNITURE,MACHINERY,HOUSEHOLD}'), gen_text(i, 809, 29, 116)
FROM (SELECT i, gen_u(i, 803, 25) AS n FROM generate_series(:lo::int8, :hi::int8) i OFFSET 0) s;
