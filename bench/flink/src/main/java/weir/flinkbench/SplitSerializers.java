package weir.flinkbench;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Version-1 serializers of a source's splits and of its enumerator's checkpoint (the splits not
 * yet assigned), from the split's write and read methods.
 */
final class SplitSerializers {
  private SplitSerializers() {}

  /** Writes one split. */
  interface Write<S> {
    void write(DataOutputStream out, S split) throws IOException;
  }

  /** Reads one split. */
  interface Read<S> {
    S read(DataInputStream in) throws IOException;
  }

  /** A serializer of one split. */
  static <S> SimpleVersionedSerializer<S> of(Write<S> write, Read<S> read) {
    return new SimpleVersionedSerializer<S>() {
      @Override
      public int getVersion() {
        return 1;
      }

      @Override
      public byte[] serialize(S s) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        write.write(out, s);
        out.flush();
        return bytes.toByteArray();
      }

      @Override
      public S deserialize(int version, byte[] data) throws IOException {
        return read.read(new DataInputStream(new ByteArrayInputStream(data)));
      }
    };
  }

  /** A serializer of a collection of splits. */
  static <S> SimpleVersionedSerializer<Collection<S>> ofAll(Write<S> write, Read<S> read) {
    return new SimpleVersionedSerializer<Collection<S>>() {
      @Override
      public int getVersion() {
        return 1;
      }

      @Override
      public byte[] serialize(Collection<S> splits) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(splits.size());
        for (S s : splits) {
          write.write(out, s);
        }
        out.flush();
        return bytes.toByteArray();
      }

      @Override
      public Collection<S> deserialize(int version, byte[] data) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
        int n = in.readInt();
        List<S> splits = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          splits.add(read.read(in));
        }
        return splits;
      }
    };
  }
}
