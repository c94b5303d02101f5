package weir.flinkbench;

import java.util.List;
import java.util.Random;
import org.apache.beam.sdk.nexmark.NexmarkConfiguration;
import org.apache.beam.sdk.nexmark.model.Auction;
import org.apache.beam.sdk.nexmark.model.Bid;
import org.apache.beam.sdk.nexmark.model.Person;
import org.apache.beam.sdk.nexmark.sources.generator.GeneratorConfig;
import org.apache.beam.sdk.nexmark.sources.generator.model.AuctionGenerator;
import org.apache.beam.sdk.nexmark.sources.generator.model.BidGenerator;
import org.apache.beam.sdk.nexmark.sources.generator.model.PersonGenerator;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;

/**
 * Nexmark events from Apache Beam 2.3.0's generator, as Flink table rows.
 *
 * <p>The event space of {@code numEvents} events is split into {@code numGenerators} generators
 * with Beam's {@link GeneratorConfig#split(int)}, as Beam's (and weir's) parallel sources do. Each
 * event is a pure function of its generator's config and its index in that generator: this class
 * does what Beam's {@code Generator.nextEvent} does for one index (event id, timestamp, a {@link
 * Random} seeded with the event id, person/auction/bid by {@code id mod 50}), without the
 * wall-clock bookkeeping. Bids additionally get {@code channel} and {@code url}, drawn from the
 * same Random after Beam's fields exactly as weir does (see
 * nexmark/testdata/javaref/RefGen.java in the weir repository).
 */
final class NexmarkEvents {
  /** 2015-07-15T00:00:00Z, Beam's and weir's default base time. */
  static final long BASE_TIME = 1436918400000L;

  static final int DEFAULT_GENERATORS = 100;

  private NexmarkEvents() {}

  /** The generators of a run of numEvents events (Beam's defaults otherwise). */
  static List<GeneratorConfig> generators(long numEvents, int numGenerators) {
    NexmarkConfiguration c = new NexmarkConfiguration();
    int n = numGenerators;
    if (numEvents > 0 && n > numEvents) {
      n = (int) numEvents; // as weir: never more generators than events
    }
    if (n < 1) {
      n = 1;
    }
    c.numEventGenerators = n;
    c.numEvents = numEvents;
    GeneratorConfig base = new GeneratorConfig(c, BASE_TIME, 0, numEvents, 0);
    return base.split(n);
  }

  // ---- channel and url: weir's deterministic version of the Flink nexmark generator's ----
  private static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};
  private static final long TABLE_SEED = 0x6e65786d61726bL; // "nexmark"
  private static final StringData[] HOT_CHANNEL_DATA = new StringData[4];
  private static final StringData[] HOT_URLS = new StringData[4];
  private static final StringData[] CHANNELS = new StringData[10000];
  private static final StringData[] CHANNEL_URLS = new StringData[10000];

  private static String randomString(Random r, int maxLength, char special) {
    int len = 3 + r.nextInt(maxLength - 3);
    StringBuilder sb = new StringBuilder();
    while (len-- > 0) {
      if (r.nextInt(13) == 0) {
        sb.append(special);
      } else {
        sb.append((char) ('a' + r.nextInt(26)));
      }
    }
    return sb.toString().trim();
  }

  private static String baseUrl(Random r) {
    return "https://www.nexmark.com/" + randomString(r, 5, '_') + '/' + randomString(r, 5, '_')
        + '/' + randomString(r, 5, '_') + "/item.htm?query=1";
  }

  static {
    Random r = new Random(TABLE_SEED);
    for (int i = 0; i < 4; i++) {
      HOT_CHANNEL_DATA[i] = StringData.fromString(HOT_CHANNELS[i]);
      HOT_URLS[i] = StringData.fromString(baseUrl(r));
    }
    for (int i = 0; i < 10000; i++) {
      String url = baseUrl(r);
      if (r.nextInt(10) > 0) {
        url = url + "&channel_id=" + Math.abs(Integer.reverse(i));
      }
      CHANNEL_URLS[i] = StringData.fromString(url);
      CHANNELS[i] = StringData.fromString("channel-" + i);
    }
  }

  private static StringData str(String s) {
    return StringData.fromString(s);
  }

  private static TimestampData ts(long ms) {
    return TimestampData.fromEpochMillis(ms);
  }

  /** Event number {@code index} of generator {@code gc}, as a row of the datagen table. */
  static RowData eventAt(GeneratorConfig gc, long index) {
    long adjusted = gc.nextAdjustedEventNumber(index);
    long eventId = gc.firstEventId + adjusted;
    long timestamp = gc.timestampAndInterEventDelayUsForEvent(adjusted).getKey();
    Random random = new Random(eventId);
    long rem = eventId % GeneratorConfig.PROPORTION_DENOMINATOR;
    if (rem < GeneratorConfig.PERSON_PROPORTION) {
      Person p = PersonGenerator.nextPerson(eventId, random, timestamp, gc);
      GenericRowData person = GenericRowData.of(p.id, str(p.name), str(p.emailAddress),
          str(p.creditCard), str(p.city), str(p.state), ts(p.dateTime), str(p.extra));
      return GenericRowData.of(0, person, null, null);
    } else if (rem < GeneratorConfig.PERSON_PROPORTION + GeneratorConfig.AUCTION_PROPORTION) {
      Auction a = AuctionGenerator.nextAuction(index, eventId, random, timestamp, gc);
      GenericRowData auction = GenericRowData.of(a.id, str(a.itemName), str(a.description),
          a.initialBid, a.reserve, ts(a.dateTime), ts(a.expires), a.seller, a.category,
          str(a.extra));
      return GenericRowData.of(1, null, auction, null);
    } else {
      Bid b = BidGenerator.nextBid(eventId, random, timestamp, gc);
      StringData channel;
      StringData url;
      if (random.nextInt(2) > 0) {
        int i = random.nextInt(4);
        channel = HOT_CHANNEL_DATA[i];
        url = HOT_URLS[i];
      } else {
        int i = random.nextInt(10000);
        channel = CHANNELS[i];
        url = CHANNEL_URLS[i];
      }
      GenericRowData bid = GenericRowData.of(b.auction, b.bidder, b.price, channel, url,
          ts(b.dateTime), str(b.extra));
      return GenericRowData.of(2, null, null, bid);
    }
  }
}
