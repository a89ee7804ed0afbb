-- TPC-H-shaped tables (TPC-H 3.0.1 clause 1.4's columns and types) for the
-- queries this kit runs (Q1, Q3, Q5, Q6, Q10, Q12, Q14, Q19): no partsupp.
-- The data are this kit's own (common.sql, *.sql here), not dbgen's, with
-- dbgen's domains and distributions (clause 4.2.3).
-- psql variable: persistence ('UNLOGGED' or '')
DROP TABLE IF EXISTS lineitem, orders, customer, part, supplier, nation, region;
CREATE :persistence TABLE region (
  r_regionkey integer      NOT NULL,
  r_name      char(25)     NOT NULL,
  r_comment   varchar(152) NOT NULL
);
CREATE :persistence TABLE nation (
  n_nationkey integer      NOT NULL,
  n_name      char(25)     NOT NULL,
  n_regionkey integer      NOT NULL,
  n_comment   varchar(152) NOT NULL
);
CREATE :persistence TABLE part (
  p_partkey     integer       NOT NULL,
  p_name        varchar(55)   NOT NULL,
  p_mfgr        char(25)      NOT NULL,
  p_brand       char(10)      NOT NULL,
  p_type        varchar(25)   NOT NULL,
  p_size        integer       NOT NULL,
  p_container   char(10)      NOT NULL,
  p_retailprice numeric(15,2) NOT NULL,
  p_comment     varchar(23)   NOT NULL
);
CREATE :persistence TABLE supplier (
  s_suppkey   integer       NOT NULL,
  s_name      char(25)      NOT NULL,
  s_address   varchar(40)   NOT NULL,
  s_nationkey integer       NOT NULL,
  s_phone     char(15)      NOT NULL,
  s_acctbal   numeric(15,2) NOT NULL,
  s_comment   varchar(101)  NOT NULL
);
CREATE :persistence TABLE customer (
  c_custkey    integer       NOT NULL,
  c_name       varchar(25)   NOT NULL,
  c_address    varchar(40)   NOT NULL,
  c_nationkey  integer       NOT NULL,
  c_phone      char(15)      NOT NULL,
  c_acctbal    numeric(15,2) NOT NULL,
  c_mktsegment char(10)      NOT NULL,
  c_comment    varchar(117)  NOT NULL
);
CREATE :persistence TABLE orders (
  o_orderkey      bigint        NOT NULL,
  o_custkey       integer       NOT NULL,
  o_orderstatus   char(1)       NOT NULL,
  o_totalprice    numeric(15,2) NOT NULL,
  o_orderdate     date          NOT NULL,
  o_orderpriority char(15)      NOT NULL,
  o_clerk         char(15)      NOT NULL,
  o_shippriority  integer       NOT NULL,
  o_comment       varchar(79)   NOT NULL
);
CREATE :persistence TABLE lineitem (
  l_orderkey      bigint        NOT NULL,
  l_partkey       integer       NOT NULL,
  l_suppkey       integer       NOT NULL,
  l_linenumber    integer       NOT NULL,
  l_quantity      numeric(15,2) NOT NULL,
  l_extendedprice numeric(15,2) NOT NULL,
  l_discount      numeric(15,2) NOT NULL,
  l_tax           numeric(15,2) NOT NULL,
  l_returnflag    char(1)       NOT NULL,
  l_linestatus    char(1)       NOT NULL,
  l_shipdate      date          NOT NULL,
  l_commitdate    date          NOT NULL,
  l_receiptdate   date          NOT NULL,
  l_shipinstruct  char(25)      NOT NULL,
  l_shipmode      char(10)      NOT NULL,
  l_comment       varchar(44)   NOT NULL
);
INSERT INTO region SELECT r, gen_region(r), gen_text(r, 501, 31, 115) FROM generate_series(0, 4) r;
INSERT INTO nation SELECT n, gen_nation(n), gen_nation_region(n), gen_text(n, 511, 31, 114) FROM generate_series(0, 24) n;

-- A line's values, shared by orders.sql (the order's status and total price)
-- and lineitem.sql: line l of order o is j = 8 o + l; order o has
-- tpch_nlines(o) lines and its date is day tpch_oday(o) from 1992-01-01
-- (uniform over STARTDATE .. ENDDATE - 151, clause 4.2.3).
CREATE OR REPLACE FUNCTION tpch_nlines(o int8) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 + ((hashint8extended(o, 1) & 2147483647) % 7)::int4 $$;
CREATE OR REPLACE FUNCTION tpch_oday(o int8) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((hashint8extended(o, 2) & 2147483647) % 2406)::int4 $$;
CREATE OR REPLACE FUNCTION tpch_partkey(j int8, npart int4) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 + ((hashint8extended(j, 10) & 2147483647) % npart)::int4 $$;
CREATE OR REPLACE FUNCTION tpch_quantity(j int8) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 + ((hashint8extended(j, 11) & 2147483647) % 50)::int4 $$;
-- discount and tax in hundredths: 0 .. 10, 0 .. 8
CREATE OR REPLACE FUNCTION tpch_discount(j int8) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((hashint8extended(j, 12) & 2147483647) % 11)::int4 $$;
CREATE OR REPLACE FUNCTION tpch_tax(j int8) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ((hashint8extended(j, 13) & 2147483647) % 9)::int4 $$;
-- ship date = order date + 1 .. 121 days
CREATE OR REPLACE FUNCTION tpch_shipdays(j int8) RETURNS int4 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 1 + ((hashint8extended(j, 14) & 2147483647) % 121)::int4 $$;
