-- TPC-H lineitem rows of orders :lo .. :hi (line l of order o: j = 8 o + l;
-- the shared values come from schema.sql's tpch_* functions).  Supplier: one
-- of the part's 4 suppliers of clause 4.2.3 ((p + i (S / 4 + (p - 1) / S))
-- mod S + 1); commit date = order date + 30 .. 90, receipt date = ship date
-- + 1 .. 30; return flag 'R' or 'A' when received by 1995-06-17 (day 1263),
-- else 'N'; line status 'O' when shipped after it, else 'F'.
-- Needs :npart, :nsupp.
INSERT INTO lineitem
SELECT gen_orderkey(o), p, (p + gen_u(j, 18, 4) * (:nsupp / 4 + (p - 1) / :nsupp)) % :nsupp + 1, l,
       q, q * gen_retail_cents(p) / 100.0, d / 100.0, tpch_tax(j) / 100.0,
       CASE WHEN sday + rdays <= 1263 THEN (CASE WHEN gen_u(j, 17, 2) = 0 THEN 'R' ELSE 'A' END) ELSE 'N' END,
       CASE WHEN sday > 1263 THEN 'O' ELSE 'F' END,
       date '1992-01-01' + sday, date '1992-01-01' + oday + 30 + gen_u(j, 15, 61),
       date '1992-01-01' + sday + rdays,
       gen_pick(j, 19, '{DELIVER IN PERSON,COLLECT COD,NONE,TAKE BACK RETURN}'),
       gen_pick(j, 20, '{REG AIR,AIR,RAIL,SHIP,TRUCK,MAIL,FOB}'), gen_text(j, 21, 10, 43)
FROM (SELECT o, tpch_nlines(o) AS nl, tpch_oday(o) AS oday
      FROM generate_series(:lo::int8, :hi::int8) o OFFSET 0) oo,
     LATERAL (SELECT l, j, tpch_partkey(j, :npart) AS p, tpch_quantity(j) AS q, tpch_discount(j) AS d,
                     oday + tpch_shipdays(j) AS sday, 1 + gen_u(j, 16, 30) AS rdays
              FROM (SELECT l, o * 8 + l AS j FROM generate_series(1, nl) l) jj OFFSET 0) li;
