package weir.flinkbench;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The Nexmark queries as Flink SQL. Each query is a blackhole sink table with the output columns
 * of the nexmark/nexmark query, and the INSERT that fills it; the statements follow the semantics
 * of nexmark/nexmark's nexmark-flink queries (qN.sql) over the views person, auction and bid.
 */
final class Queries {
  private Queries() {}

  /** The event table and the three views; %d = events, %d = generators, %d = splits. */
  static List<String> eventTables(long events, int generators, int splits) {
    String table = "CREATE TABLE events (\n"
        + "  event_type INT,\n"
        + "  person ROW<id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR,"
        + " city VARCHAR, state VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR>,\n"
        + "  auction ROW<id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT,"
        + " reserve BIGINT, `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,"
        + " category BIGINT, extra VARCHAR>,\n"
        + "  bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,"
        + " `dateTime` TIMESTAMP(3), extra VARCHAR>,\n"
        + "  `dateTime` AS CASE event_type WHEN 0 THEN person.`dateTime`"
        + " WHEN 1 THEN auction.`dateTime` ELSE bid.`dateTime` END,\n"
        // Each split's events are in timestamp order: the watermark is the largest timestamp
        // seen, minus the 1 ms Flink's watermark semantics need (a watermark t declares that
        // no event at or before t follows).
        + "  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '0.001' SECOND\n"
        + ") WITH ('connector' = 'weir-nexmark', 'events.num' = '" + events
        + "', 'generators' = '" + generators + "', 'splits' = '" + splits + "')";
    return List.of(table,
        "CREATE VIEW person AS SELECT person.id, person.name, person.emailAddress,"
            + " person.creditCard, person.city, person.state, `dateTime`, person.extra"
            + " FROM events WHERE event_type = 0",
        "CREATE VIEW auction AS SELECT auction.id, auction.itemName, auction.description,"
            + " auction.initialBid, auction.reserve, `dateTime`, auction.expires, auction.seller,"
            + " auction.category, auction.extra FROM events WHERE event_type = 1",
        "CREATE VIEW bid AS SELECT bid.auction, bid.bidder, bid.price, bid.channel, bid.url,"
            + " `dateTime`, bid.extra FROM events WHERE event_type = 2");
  }

  private static String sink(String name, String columns) {
    return "CREATE TABLE " + name + " (" + columns + ") WITH ('connector' = 'blackhole')";
  }

  private static final String BID_COLUMNS = "auction BIGINT, bidder BIGINT, price BIGINT,"
      + " channel VARCHAR, url VARCHAR, `dateTime` TIMESTAMP(3), extra VARCHAR";

  /** Query name to its statements (sink DDL, helper views, then the INSERT last). */
  static final Map<String, List<String>> ALL = new TreeMap<>();

  static {
    // q0: pass-through.
    ALL.put("q0", List.of(
        sink("sink_q0", "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra VARCHAR"),
        "INSERT INTO sink_q0 SELECT auction, bidder, price, `dateTime`, extra FROM bid"));
    // q1: currency conversion, dollars to euros.
    ALL.put("q1", List.of(
        sink("sink_q1", "auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), `dateTime` TIMESTAMP(3), extra VARCHAR"),
        "INSERT INTO sink_q1 SELECT auction, bidder, 0.908 * price, `dateTime`, extra FROM bid"));
    // q2: selection of bids on every 123rd auction.
    ALL.put("q2", List.of(
        sink("sink_q2", "auction BIGINT, price BIGINT"),
        "INSERT INTO sink_q2 SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0"));
    // q3: local item suggestion, an unwindowed join of auctions (category 10) and sellers.
    ALL.put("q3", List.of(
        sink("sink_q3", "name VARCHAR, city VARCHAR, state VARCHAR, id BIGINT"),
        "INSERT INTO sink_q3 SELECT p.name, p.city, p.state, a.id"
            + " FROM auction a JOIN person p ON a.seller = p.id"
            + " WHERE a.category = 10 AND p.state IN ('OR', 'ID', 'CA')"));
    // q4: average closing price per category (changelog).
    ALL.put("q4", List.of(
        sink("sink_q4", "id BIGINT, final BIGINT"),
        "INSERT INTO sink_q4 SELECT w.category, AVG(w.final) FROM ("
            + " SELECT a.id, a.category, MAX(b.price) AS final FROM auction a, bid b"
            + " WHERE a.id = b.auction AND b.`dateTime` BETWEEN a.`dateTime` AND a.expires"
            + " GROUP BY a.id, a.category) w GROUP BY w.category"));
    // q5: hot items: per 10 s window sliding by 2 s, the auctions with the most bids.
    String q5counts = "SELECT auction, COUNT(*) AS num, window_start, window_end"
        + " FROM TABLE(HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"
        + " GROUP BY auction, window_start, window_end";
    ALL.put("q5", List.of(
        sink("sink_q5", "auction BIGINT, num BIGINT"),
        "INSERT INTO sink_q5 SELECT c.auction, c.num FROM (" + q5counts + ") c JOIN ("
            + " SELECT MAX(m.num) AS maxn, m.window_start, m.window_end FROM (" + q5counts + ") m"
            + " GROUP BY m.window_start, m.window_end) x"
            + " ON c.window_start = x.window_start AND c.window_end = x.window_end AND c.num >= x.maxn"));
    // q7: highest bid per 10 s tumbling window (price and bidder land in each other's columns,
    // as in nexmark/nexmark's SQL). nexmark/nexmark joins on B.dateTime BETWEEN wend - 10 s AND
    // wend with wend = window_end, a plain timestamp, which makes it a regular join that keeps
    // every bid forever. The same condition on window_time (= window_end - 1 ms, a rowtime
    // attribute) is an interval join, whose state Flink drops as the watermark passes: same
    // rows, bounded state.
    ALL.put("q7", List.of(
        sink("sink_q7", "auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra VARCHAR"),
        "INSERT INTO sink_q7 SELECT b.auction, b.price, b.bidder, b.`dateTime`, b.extra FROM bid b JOIN ("
            + " SELECT MAX(price) AS maxprice, window_time AS wtime"
            + " FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))"
            + " GROUP BY window_start, window_end, window_time) m ON b.price = m.maxprice"
            + " AND b.`dateTime` BETWEEN m.wtime - INTERVAL '9.999' SECOND"
            + " AND m.wtime + INTERVAL '0.001' SECOND"));
    // q8: people who registered and opened an auction in the same 10 s tumbling window.
    ALL.put("q8", List.of(
        sink("sink_q8", "id BIGINT, name VARCHAR, stime TIMESTAMP(3)"),
        "INSERT INTO sink_q8 SELECT p.id, p.name, p.window_start FROM ("
            + " SELECT id, name, window_start, window_end"
            + " FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))"
            + " GROUP BY id, name, window_start, window_end) p JOIN ("
            + " SELECT seller, window_start, window_end"
            + " FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))"
            + " GROUP BY seller, window_start, window_end) a"
            + " ON p.id = a.seller AND p.window_start = a.window_start AND p.window_end = a.window_end"));
    // q11: bids per bidder in 10 s session windows.
    ALL.put("q11", List.of(
        sink("sink_q11", "bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)"),
        "INSERT INTO sink_q11 SELECT bidder, COUNT(*),"
            + " SESSION_START(`dateTime`, INTERVAL '10' SECOND), SESSION_END(`dateTime`, INTERVAL '10' SECOND)"
            + " FROM bid GROUP BY bidder, SESSION(`dateTime`, INTERVAL '10' SECOND)"));
    // q12: bids per bidder in 10 s tumbling windows of processing time, as nexmark/nexmark's SQL.
    ALL.put("q12", List.of(
        sink("sink_q12", "bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)"),
        "CREATE VIEW bid_proctime AS SELECT *, PROCTIME() AS p_time FROM bid",
        "INSERT INTO sink_q12 SELECT bidder, COUNT(*), window_start, window_end"
            + " FROM TABLE(TUMBLE(TABLE bid_proctime, DESCRIPTOR(p_time), INTERVAL '10' SECOND))"
            + " GROUP BY bidder, window_start, window_end"));
    // q17: per auction and day: bid counts per price class, min/max/avg/sum price (changelog).
    ALL.put("q17", List.of(
        sink("sink_q17", "auction BIGINT, `day` VARCHAR, total_bids BIGINT, rank1_bids BIGINT,"
            + " rank2_bids BIGINT, rank3_bids BIGINT, min_price BIGINT, max_price BIGINT,"
            + " avg_price BIGINT, sum_price BIGINT"),
        "INSERT INTO sink_q17 SELECT auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd'), COUNT(*),"
            + " COUNT(*) FILTER (WHERE price < 10000),"
            + " COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),"
            + " COUNT(*) FILTER (WHERE price >= 1000000),"
            + " MIN(price), MAX(price), AVG(price), SUM(price)"
            + " FROM bid GROUP BY auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')"));
    // q18: the last bid of each bidder on each auction (changelog).
    ALL.put("q18", List.of(
        sink("sink_q18", BID_COLUMNS),
        "INSERT INTO sink_q18 SELECT auction, bidder, price, channel, url, `dateTime`, extra FROM ("
            + " SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rn"
            + " FROM bid) WHERE rn <= 1"));
    // q19: the 10 highest bids of each auction (changelog).
    ALL.put("q19", List.of(
        sink("sink_q19", BID_COLUMNS + ", rank_number BIGINT"),
        "INSERT INTO sink_q19 SELECT * FROM ("
            + " SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number"
            + " FROM bid) WHERE rank_number <= 10"));
    // q20: bids joined with their auction, auctions of category 10 only.
    ALL.put("q20", List.of(
        sink("sink_q20", "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,"
            + " bid_dateTime TIMESTAMP(3), bid_extra VARCHAR, itemName VARCHAR, description VARCHAR,"
            + " initialBid BIGINT, reserve BIGINT, auction_dateTime TIMESTAMP(3), expires TIMESTAMP(3),"
            + " seller BIGINT, category BIGINT, auction_extra VARCHAR"),
        "INSERT INTO sink_q20 SELECT b.auction, b.bidder, b.price, b.channel, b.url, b.`dateTime`, b.extra,"
            + " a.itemName, a.description, a.initialBid, a.reserve, a.`dateTime`, a.expires, a.seller,"
            + " a.category, a.extra FROM bid b JOIN auction a ON b.auction = a.id WHERE a.category = 10"));
  }
}
