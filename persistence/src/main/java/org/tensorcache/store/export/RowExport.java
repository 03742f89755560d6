package org.tensorcache.store.export;

import static org.tensorcache.store.segment.SafetensorsWriter.crcHex;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.io.DataRegionWriter;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowCodec;
import org.tensorcache.store.segment.SafetensorsWriter;
import org.tensorcache.store.segment.TensorInfo;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Exports a whole per-token cache as one safetensors file, its rows decoded: what {@link
 * CacheExport} is to a cache of fixed-shape fields, with the same metadata.
 *
 * <p>Layout: one tensor per field of shape {@code [total tokens, ...shape]} in spec order, every
 * present example's tokens in example order (a teacher's entries by log-prob, descending, within
 * each token), then {@value #OFFSETS} ({@code I64 [n + 1]}: example {@code i} holds tokens {@code
 * [offsets[i], offsets[i + 1])}, none when it is missing) and {@value CacheExport#PRESENT} ({@code
 * U8 [n]}, as in {@link CacheExport}). The metadata's {@code fields} mark the fields {@code
 * per_token}.
 */
public final class RowExport {
  /** Name of the examples' token offsets. */
  public static final String OFFSETS = "__offsets__";

  private RowExport() {}

  /**
   * Atomically writes the cache to {@code file}, with the {@code inputs} it was filled from (left
   * out when empty). {@code rows} holds at most one per range; a range without one is exported as
   * missing. Each range is decoded once per field, so memory stays at one range's values.
   */
  public static void write(
      Path file,
      CacheSpec spec,
      Fingerprint fingerprint,
      Map<String, String> inputs,
      Collection<RowBlock> rows)
      throws IOException {
    fingerprint.checkBelongsTo(spec);
    RowCodec codec = RowCodec.of(spec);
    RowBlock[] byRange = new RowBlock[spec.rangeCount()];
    long tokens = 0;
    for (RowBlock r : rows) {
      if (!r.spec().equals(spec) || byRange[r.range()] != null) {
        throw new IllegalArgumentException(
            r + " in the export of " + spec + ", expected at most one range of rows per range");
      }
      byRange[r.range()] = r;
      tokens += r.totalTokens();
    }
    String inputsJson = inputs.isEmpty() ? null : ExportInputs.encode(inputs);
    SafetensorsWriter.writeFile(
        file,
        tensors(spec, tokens),
        CacheExport.metadata(spec, fingerprint, inputsJson, crcHex(0)),
        out -> {
          for (int f = 0; f < spec.fields().size(); f++) {
            for (RowBlock r : byRange) {
              if (r != null) {
                writeField(out, codec, r, f);
              }
            }
          }
          writeOffsets(out, spec, byRange);
          writePresence(out, spec, byRange);
        });
  }

  private static List<TensorInfo> tensors(CacheSpec spec, long tokens) {
    List<TensorInfo> tensors = new ArrayList<>();
    for (FieldSpec f : spec.fields()) {
      int[] tokenShape = f.shape();
      long[] shape = new long[tokenShape.length + 1];
      shape[0] = tokens;
      for (int i = 0; i < tokenShape.length; i++) {
        shape[i + 1] = tokenShape[i];
      }
      tensors.add(new TensorInfo(f.name(), f.dtype().safetensorsName(), shape));
    }
    tensors.add(new TensorInfo(OFFSETS, "I64", new long[] {spec.n() + 1}));
    tensors.add(new TensorInfo(CacheExport.PRESENT, "U8", new long[] {spec.n()}));
    return tensors;
  }

  /** Field {@code f} of every present example of {@code rows}, decoded. */
  private static void writeField(DataRegionWriter out, RowCodec codec, RowBlock rows, int f)
      throws IOException {
    CacheSpec spec = rows.spec();
    Object[] scratch = new Object[spec.fields().size()];
    for (int i = 0; i < rows.length(); i++) {
      long index = rows.start() + i;
      byte[] row = rows.row(index);
      if (row == null) {
        continue;
      }
      int tokens = rows.tokens(index);
      for (int g = 0; g < scratch.length; g++) {
        FieldSpec field = spec.fields().get(g);
        int elements = Math.multiplyExact(tokens, field.width());
        if (scratch[g] == null || FieldArrays.length(scratch[g]) < elements) {
          scratch[g] = field.dtype().newArray(Math.max(elements, 1 << 12));
        }
      }
      codec.decode(row, 0, row.length, tokens, scratch, 0);
      FieldSpec field = spec.fields().get(f);
      out.putElements(field.dtype(), scratch[f], 0, tokens * field.width());
    }
  }

  private static void writeOffsets(DataRegionWriter out, CacheSpec spec, RowBlock[] byRange)
      throws IOException {
    long[] offsets = new long[spec.rangeSize() + 1];
    long end = 0;
    out.putElements(DType.I64, new long[] {0}, 0, 1);
    for (int r = 0; r < byRange.length; r++) {
      int length = spec.rangeLength(r);
      long start = spec.rangeStart(r);
      for (int i = 0; i < length; i++) {
        end += byRange[r] == null ? 0 : byRange[r].tokens(start + i);
        offsets[i] = end;
      }
      out.putElements(DType.I64, offsets, 0, length);
    }
  }

  private static void writePresence(DataRegionWriter out, CacheSpec spec, RowBlock[] byRange)
      throws IOException {
    byte[] flags = new byte[spec.rangeSize()];
    for (int r = 0; r < byRange.length; r++) {
      int length = spec.rangeLength(r);
      long start = spec.rangeStart(r);
      for (int i = 0; i < length; i++) {
        flags[i] = (byte) (byRange[r] != null && byRange[r].isPresent(start + i) ? 1 : 0);
      }
      out.putBytes(flags, 0, length);
    }
  }
}
