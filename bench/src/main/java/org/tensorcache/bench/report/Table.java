package org.tensorcache.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One table of a report, declared once: its columns (a JSON key, a printed header and a format),
 * then its rows, each given once, which it both prints and gives back as the JSON rows of the
 * results file. A column without a format is in the JSON only; a null value is left out of the JSON
 * and printed blank, a NaN left out of the JSON.
 */
public final class Table {
  private static final Pattern WIDTH = Pattern.compile("%(-?)(\\d*)(?:\\.(\\d+))?([a-zA-Z])");

  /** A column: JSON {@code key}, printed {@code header} in {@code format}, or not printed. */
  private record Column(String key, String header, String format) {

    /**
     * The JSON value of {@code v}: a double rounded two digits past what is printed, none for NaN.
     */
    Object json(Object v) {
      if (!(v instanceof Double d)) {
        return v;
      }
      Matcher m = WIDTH.matcher(format == null ? "" : format);
      int digits = 2 + (m.find() && m.group(3) != null ? Integer.parseInt(m.group(3)) : 0);
      return Double.isFinite(d) ? Stats.round(d, digits) : null;
    }

    String head() {
      Matcher m = WIDTH.matcher(format);
      String width = m.find() ? m.group(1) + m.group(2) : "";
      return String.format(Locale.ROOT, "%" + width + "s", header);
    }

    String cell(Object v) {
      return v == null ? " ".repeat(head().length()) : String.format(Locale.ROOT, format, v);
    }
  }

  private final String title;
  private final List<Column> columns = new ArrayList<>();
  private final List<Object[]> rows = new ArrayList<>();

  /** A table printed under {@code title} (none where null). */
  public Table(String title) {
    this.title = title;
  }

  public Table col(String key, String format) {
    return col(key, key, format);
  }

  /** A column printed under {@code header} in {@code format} (e.g. {@code %9.1f}). */
  public Table col(String key, String header, String format) {
    columns.add(new Column(key, header, format));
    return this;
  }

  public Table json(String key) {
    columns.add(new Column(key, key, null));
    return this;
  }

  public Table row(Object... values) {
    if (values.length != columns.size()) {
      throw new IllegalArgumentException(
          "a row of " + title + " has " + values.length + " values, expected " + columns.size());
    }
    rows.add(values);
    return this;
  }

  /**
   * The rows as the results file holds them; a key {@code a/b} is key {@code b} of the object
   * {@code a} in its row.
   */
  @SuppressWarnings("unchecked")
  public List<Map<String, Object>> json() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object[] r : rows) {
      Map<String, Object> m = new LinkedHashMap<>();
      for (int i = 0; i < r.length; i++) {
        Object v = columns.get(i).json(r[i]);
        if (v != null) {
          Map<String, Object> into = m;
          String[] path = columns.get(i).key().split("/");
          for (int p = 0; p < path.length - 1; p++) {
            into = (Map<String, Object>) into.computeIfAbsent(path[p], k -> new LinkedHashMap<>());
          }
          into.put(path[path.length - 1], v);
        }
      }
      out.add(m);
    }
    return out;
  }

  /** Prints the title, the header and every row; returns {@link #json()}. */
  public List<Map<String, Object>> print() {
    if (title != null) {
      System.out.println("-- " + title + " --");
    }
    printLine(i -> columns.get(i).head());
    for (Object[] r : rows) {
      printLine(i -> columns.get(i).cell(r[i]));
    }
    return json();
  }

  /** The cells of the printed columns, one space apart. */
  private void printLine(IntFunction<String> cell) {
    StringJoiner line = new StringJoiner(" ");
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).format() != null) {
        line.add(cell.apply(i));
      }
    }
    System.out.println(line.toString().stripTrailing());
  }
}
