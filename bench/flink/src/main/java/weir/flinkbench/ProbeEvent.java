package weir.flinkbench;

/**
 * A record of the latency benchmark, as weir's probeEvent: a key, the time (System.nanoTime of
 * this JVM) the source was due to emit it, and the key's count, set by the keyed count. A POJO,
 * serialized by Flink's PojoSerializer across the key-by exchange.
 */
public final class ProbeEvent {
  public long key;
  public long emit;
  public long count;

  public ProbeEvent() {}
}
