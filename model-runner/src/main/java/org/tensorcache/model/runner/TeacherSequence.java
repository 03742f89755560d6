package org.tensorcache.model.runner;

import java.util.Arrays;
import org.tensorcache.model.data.TokenizedCompletion;
import org.tensorcache.model.hf.Truncation;

/**
 * One teacher input: token ids after truncation and the positions of the tokens trained on, those
 * of TRL's SFT labels that its loss uses: completion tokens at positions {@code >= 1} (position
 * {@code p - 1} predicts token {@code p}; the first token is never predicted).
 *
 * @param ids the token ids the model sees
 * @param targets the positions of the trained tokens, ascending, each in {@code [1, ids.length)}
 */
record TeacherSequence(int[] ids, int[] targets) {

  /**
   * {@code row} cut as TRL's SFT data preparation cuts it: {@code keep_start} keeps the first
   * {@code maxLength} ids and their mask, {@code keep_end} the last; 0 cuts nothing.
   */
  static TeacherSequence of(TokenizedCompletion row, Truncation truncation) {
    int n = row.ids().length;
    int from = 0;
    int to = n;
    if (truncation.maxLength() > 0 && n > truncation.maxLength()) {
      if (truncation.mode() == Truncation.Mode.KEEP_START) {
        to = truncation.maxLength();
      } else {
        from = n - truncation.maxLength();
      }
    }
    int[] ids = Arrays.copyOfRange(row.ids(), from, to);
    int[] targets = new int[ids.length];
    int count = 0;
    for (int p = 1; p < ids.length; p++) {
      if (row.completionMask()[from + p] == 1) {
        targets[count++] = p;
      }
    }
    return new TeacherSequence(ids, Arrays.copyOf(targets, count));
  }

  /** How many tokens get a teacher distribution. */
  int tokens() {
    return targets.length;
  }
}
