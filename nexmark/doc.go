// Package nexmark generates the Nexmark benchmark's event stream (people,
// auctions and bids of an online auction site) as a deterministic,
// field-for-field port of Apache Beam's Nexmark generator
// (org.apache.beam.sdk.nexmark.sources.generator: GeneratorConfig, Generator
// and the Person/Auction/Bid/Price/Strings model generators).
//
// For the same configuration the package yields the same events, in the same
// order and with the same field values, as Beam's generator; bids
// additionally carry the channel and url fields of the Flink nexmark
// benchmark, derived deterministically (see channel.go for how and for the
// deviations from Flink's implementation).
//
// Beam seeds a java.util.Random with each event's id and draws the event's
// fields from it, so an event is a pure function of the configuration and
// its index: Generator.EventAt gives random access, and a source whose
// position is "the index of the next event" rewinds exactly on recovery.
// JavaRandom is the bit-exact java.util.Random port this relies on.
//
// Beam's current nextExactString (six letters per random int, which also
// yields the characters 'H' to '`') is ported. Beam 2.3.0, the only release
// of the Nexmark module found on Maven Central, drew one nextInt(26) per
// letter instead, so its "extra" strings differ (and, here, the channel and
// URL drawn after them); every other field is the same.
//
// Prices are Math.round(Math.pow(10, 6*nextDouble()) * 100) in Java, and
// Math.pow is allowed to differ by an ulp between JVMs. This port rounds the
// mathematically exact power; a price could only differ from a JVM's where
// pow*100 falls within an ulp or so of a half cent, which did not happen in a
// 100-million-draw comparison with OpenJDK 17.
//
// Parallel generation follows Beam: Generator.Split(n) partitions the id
// range exactly as GeneratorConfig.split, and Config.NumEventGenerators slows
// each generator's timeline so that n generators together reach the
// configured rate.
package nexmark
