// Test-vector generator for weir's nexmark package. Prints events from Apache Beam's released
// Nexmark generator (beam-sdks-java-nexmark 2.3.0 jar) as JSON lines in weir's nexmark format.
// See README.md beside it for how the committed vectors were produced.
//
// usage: RefGen numEvents split [key=value ...]
//   split = number of sub-generators (GeneratorConfig.split(n)); 0 = no split (one Generator on
//   the standard config, like NexmarkUtils.standardEventIterator). Sub-generators are printed one
//   after another, in split order.
//   keys: numEventGenerators firstEventRate nextEventRate rateShape(SQUARE|SINE) rateUnit
//         ratePeriodSec outOfOrderGroupSize avgPersonByteSize avgAuctionByteSize avgBidByteSize
//         hotAuctionRatio hotSellersRatio hotBiddersRatio numInFlightAuctions numActivePeople
//         maxEvents (0 = Beam's "unbounded")
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.util.List;
import java.util.Random;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.NexmarkUtils;
import org.apache.beam.sdk.nexmark.model.Auction;
import org.apache.beam.sdk.nexmark.model.Bid;
import org.apache.beam.sdk.nexmark.model.Event;
import org.apache.beam.sdk.nexmark.model.Person;
import org.apache.beam.sdk.nexmark.sources.generator.Generator;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.apache.beam.sdk.nexmark.sources.generator.model.BidGenerator;

public class RefGen {
  static final long BASE_TIME = org.joda.time.Instant.parse("2015-07-15T00:00:00.000Z").getMillis();

  // ---- channel/url: weir's deterministic variant of Flink nexmark's BidGenerator logic ----
  static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};
  static final long TABLE_SEED = 0x6e65786d61726bL; // "nexmark"
  static final String[] HOT_URLS = new String[4];
  static final String[] CHANNEL_URLS = new String[10000];

  static String nextString(Random r, int maxLength, char special) {
    int len = 3 + r.nextInt(maxLength - 3);
    StringBuilder sb = new StringBuilder();
    while (len-- > 0) {
      if (r.nextInt(13) == 0) sb.append(special);
      else sb.append((char) ('a' + r.nextInt(26)));
    }
    return sb.toString().trim();
  }

  static String baseUrl(Random r) {
    return "https://www.nexmark.com/" + nextString(r, 5, '_') + '/' + nextString(r, 5, '_') + '/'
        + nextString(r, 5, '_') + '/' + "item.htm?query=1";
  }

  static {
    Random r = new Random(TABLE_SEED);
    for (int i = 0; i < 4; i++) HOT_URLS[i] = baseUrl(r);
    for (int i = 0; i < 10000; i++) {
      String url = baseUrl(r);
      if (r.nextInt(10) > 0) url = url + "&channel_id=" + Math.abs(Integer.reverse(i));
      CHANNEL_URLS[i] = url;
    }
  }

  static void esc(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') sb.append('\\').append(c);
      else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
      else sb.append(c);
    }
    sb.append('"');
  }

  public static void main(String[] args) throws Exception {
    long numEvents = Long.parseLong(args[0]);
    int split = Integer.parseInt(args[1]);
    NexmarkConfiguration c = new NexmarkConfiguration();
    long maxEvents = numEvents;
    for (int i = 2; i < args.length; i++) {
      String[] kv = args[i].split("=", 2);
      String k = kv[0], v = kv[1];
      switch (k) {
        case "numEventGenerators": c.numEventGenerators = Integer.parseInt(v); break;
        case "firstEventRate": c.firstEventRate = Integer.parseInt(v); break;
        case "nextEventRate": c.nextEventRate = Integer.parseInt(v); break;
        case "rateShape": c.rateShape = NexmarkUtils.RateShape.valueOf(v); break;
        case "rateUnit": c.rateUnit = NexmarkUtils.RateUnit.valueOf(v); break;
        case "ratePeriodSec": c.ratePeriodSec = Integer.parseInt(v); break;
        case "outOfOrderGroupSize": c.outOfOrderGroupSize = Long.parseLong(v); break;
        case "avgPersonByteSize": c.avgPersonByteSize = Integer.parseInt(v); break;
        case "avgAuctionByteSize": c.avgAuctionByteSize = Integer.parseInt(v); break;
        case "avgBidByteSize": c.avgBidByteSize = Integer.parseInt(v); break;
        case "hotAuctionRatio": c.hotAuctionRatio = Integer.parseInt(v); break;
        case "hotSellersRatio": c.hotSellersRatio = Integer.parseInt(v); break;
        case "hotBiddersRatio": c.hotBiddersRatio = Integer.parseInt(v); break;
        case "numInFlightAuctions": c.numInFlightAuctions = Integer.parseInt(v); break;
        case "numActivePeople": c.numActivePeople = Integer.parseInt(v); break;
        case "maxEvents": maxEvents = Long.parseLong(v); break;
        default: throw new IllegalArgumentException(k);
      }
    }
    c.numEvents = maxEvents;
    GeneratorConfig base = new GeneratorConfig(c, BASE_TIME, 0, maxEvents, 0);
    List<GeneratorConfig> configs =
        split == 0 ? java.util.Collections.singletonList(base) : base.split(split);
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8"), 1 << 16);
    StringBuilder sb = new StringBuilder();
    for (GeneratorConfig gc : configs) {
      Generator g = new Generator(gc);
      long emitted = 0;
      while (g.hasNext() && emitted < numEvents) {
        long eventId = g.getNextEventId();
        long count = emitted;
        Generator.NextEvent ne = g.nextEvent();
        emitted++;
        Event e = ne.event;
        sb.setLength(0);
        if (e.newPerson != null) {
          Person p = e.newPerson;
          sb.append("{\"type\":\"person\",\"id\":").append(p.id).append(",\"name\":");
          esc(sb, p.name);
          sb.append(",\"emailAddress\":"); esc(sb, p.emailAddress);
          sb.append(",\"creditCard\":"); esc(sb, p.creditCard);
          sb.append(",\"city\":"); esc(sb, p.city);
          sb.append(",\"state\":"); esc(sb, p.state);
          sb.append(",\"dateTime\":").append(p.dateTime);
          sb.append(",\"extra\":"); esc(sb, p.extra);
          sb.append('}');
        } else if (e.newAuction != null) {
          Auction a = e.newAuction;
          sb.append("{\"type\":\"auction\",\"id\":").append(a.id).append(",\"itemName\":");
          esc(sb, a.itemName);
          sb.append(",\"description\":"); esc(sb, a.description);
          sb.append(",\"initialBid\":").append(a.initialBid);
          sb.append(",\"reserve\":").append(a.reserve);
          sb.append(",\"dateTime\":").append(a.dateTime);
          sb.append(",\"expires\":").append(a.expires);
          sb.append(",\"seller\":").append(a.seller);
          sb.append(",\"category\":").append(a.category);
          sb.append(",\"extra\":"); esc(sb, a.extra);
          sb.append('}');
        } else {
          Bid b = e.bid;
          // Re-run Beam's BidGenerator with a Random seeded exactly as Generator.nextEvent seeds
          // it, check it reproduces the generator's bid, then keep drawing for channel/url.
          Random r = new Random(eventId);
          Bid again = BidGenerator.nextBid(eventId, r, ne.eventTimestamp, gc);
          if (again.auction != b.auction || again.bidder != b.bidder || again.price != b.price
              || again.dateTime != b.dateTime || !again.extra.equals(b.extra)) throw new IllegalStateException("replay mismatch at " + count);
          String channel, url;
          if (r.nextInt(2) > 0) {
            int i = r.nextInt(4);
            channel = HOT_CHANNELS[i];
            url = HOT_URLS[i];
          } else {
            int n = r.nextInt(10000);
            channel = "channel-" + n;
            url = CHANNEL_URLS[n];
          }
          sb.append("{\"type\":\"bid\",\"auction\":").append(b.auction);
          sb.append(",\"bidder\":").append(b.bidder);
          sb.append(",\"price\":").append(b.price);
          sb.append(",\"channel\":"); esc(sb, channel);
          sb.append(",\"url\":"); esc(sb, url);
          sb.append(",\"dateTime\":").append(b.dateTime);
          sb.append(",\"extra\":"); esc(sb, b.extra);
          sb.append('}');
        }
        sb.append('\n');
        out.write(sb.toString());
      }
    }
    out.flush();
  }
}
