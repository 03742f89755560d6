package org.tensorcache.launch;

import java.nio.file.Path;
import java.util.function.Supplier;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.TokenRunner;
import org.tensorcache.model.usermodel.TeacherModel;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.Segments;

/**
 * A prepared distillation teacher's job ({@code --runner topk}): the rows as the teacher takes
 * them, the cache's identity, its runners (one per compute thread, over the shared model), how a
 * range's rows are grouped, and where its segments of rows are kept. Closing it frees the model.
 */
public record TeacherJob(
    ExampleSet rows,
    CacheIdentity id,
    Supplier<TokenRunner> runners,
    BatchPlanner planner,
    Segments<RowBlock> segments,
    TeacherModel model)
    implements AutoCloseable {
  /**
   * The job a node registers: the cache's definition, its rows kept where {@link #segments} keeps
   * them (verified local copies of objects beside the cache).
   */
  public Job job() {
    Path local = id.cacheDir().resolve("segments");
    CacheDefinition definition =
        CacheDefinition.perToken(
                id.spec(), id.fingerprint(), rows, runners, local, planner, id.inputs())
            .withRowSegments(segments, local);
    return new Job(rows, id.spec(), id.fingerprint(), id.cacheDir(), definition);
  }

  @Override
  public void close() {
    model.close();
  }
}
