package weir.flinkbench;

import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;

/** The 'weir-nexmark' table connector: {@link NexmarkSource} as a scan table source. */
public final class NexmarkTableFactory implements DynamicTableSourceFactory {
  static final ConfigOption<Long> EVENTS =
      ConfigOptions.key("events.num").longType().noDefaultValue();
  static final ConfigOption<Integer> GENERATORS =
      ConfigOptions.key("generators").intType().defaultValue(NexmarkEvents.DEFAULT_GENERATORS);
  static final ConfigOption<Integer> SPLITS = ConfigOptions.key("splits").intType().defaultValue(1);

  @Override
  public String factoryIdentifier() {
    return "weir-nexmark";
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Set.of(EVENTS);
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    return Set.of(GENERATORS, SPLITS);
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    helper.validate();
    return new TableSource(helper.getOptions().get(EVENTS), helper.getOptions().get(GENERATORS),
        helper.getOptions().get(SPLITS));
  }

  static final class TableSource implements ScanTableSource {
    private final long events;
    private final int generators;
    private final int splits;

    TableSource(long events, int generators, int splits) {
      this.events = events;
      this.generators = generators;
      this.splits = splits;
    }

    @Override
    public ChangelogMode getChangelogMode() {
      return ChangelogMode.insertOnly();
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext ctx) {
      return SourceProvider.of(new NexmarkSource(events, generators, splits));
    }

    @Override
    public DynamicTableSource copy() {
      return new TableSource(events, generators, splits);
    }

    @Override
    public String asSummaryString() {
      return "weir-nexmark(" + events + " events)";
    }
  }
}
