-- SSB lineorder rows of orders :lo .. :hi: order o has 1-7 lines; its order
-- date is uniform over 1992-01-01 .. 1998-08-02 (TPC-H's STARTDATE to
-- ENDDATE - 151 days, day numbers 0 .. 2405), its customer one of the keys
-- not divisible by 3; line l's values come from j = 8 o + l.  Prices in cents
-- as dbgen: extended price = quantity x the part's retail price, revenue =
-- extended price x (100 - discount) / 100, supply cost = 6 x retail / 10;
-- the order's total = the sum of its lines' extended price x (100 - discount)
-- x (100 + tax) / 10000.  Needs :ncust, :npart, :nsupp.
INSERT INTO lineorder
SELECT gen_orderkey(o), l, custkey, p, 1 + gen_u(j, 16, :nsupp), ssb_datekey(day), prio, '0',
       q, q * gen_retail_cents(p), tot, d, q * gen_retail_cents(p) * (100 - d) / 100,
       6 * gen_retail_cents(p) / 10, t, ssb_datekey(day + 30 + gen_u(j, 14, 61)),
       gen_pick(j, 15, '{REG AIR,AIR,RAIL,SHIP,TRUCK,MAIL,FOB}')
FROM (SELECT o, nl, gen_u(o, 2, 2406) AS day, gen_custkey(o, 3, :ncust) AS custkey,
             gen_pick(o, 4, '{1-URGENT,2-HIGH,3-MEDIUM,4-NOT SPECIFIED,5-LOW}') AS prio,
             (SELECT sum(q * gen_retail_cents(p)::int8 * (100 - d) * (100 + t) / 10000)::int4
              FROM (SELECT 1 + gen_u(o * 8 + l, 10, :npart) AS p, 1 + gen_u(o * 8 + l, 11, 50) AS q,
                           gen_u(o * 8 + l, 12, 11) AS d, gen_u(o * 8 + l, 13, 9) AS t
                    FROM generate_series(1, nl) l) x) AS tot
      FROM (SELECT o, 1 + gen_u(o, 1, 7) AS nl FROM generate_series(:lo::int8, :hi::int8) o) oo
      OFFSET 0) ord,
     LATERAL (SELECT l, j, 1 + gen_u(j, 10, :npart) AS p, 1 + gen_u(j, 11, 50) AS q,
                     gen_u(j, 12, 11) AS d, gen_u(j, 13, 9) AS t
              FROM (SELECT l, o * 8 + l AS j FROM generate_series(1, nl) l OFFSET 0) jj) li;
