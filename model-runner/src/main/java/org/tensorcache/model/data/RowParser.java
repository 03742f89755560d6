package org.tensorcache.model.data;

import com.fasterxml.jackson.databind.JsonNode;

/** Turns one JSON row of a known format into an {@link Example}, naming the field at fault. */
final class RowParser {
  /** Where a row stands, for errors. */
  record Where(String source, long line) {
    MalformedDataException error(String problem) {
      return new MalformedDataException(source, line, problem, null);
    }
  }

  private RowParser() {}

  static Example parse(DataFormat format, JsonNode node, long index, Where where) {
    return switch (format) {
      case TEXT ->
          new PreferenceExample(
              index,
              text(node, "prompt", where),
              text(node, "chosen", where),
              text(node, "rejected", where));
      case TOKENS ->
          new TokenizedPreference(
              index,
              ids(node, "prompt_ids", where, true),
              ids(node, "chosen_ids", where, false),
              ids(node, "rejected_ids", where, false));
      case DOCUMENT -> new DocumentExample(index, text(node, "text", where));
      case COMPLETION ->
          new CompletionExample(
              index, text(node, "prompt", where), text(node, "completion", where));
      case COMPLETION_TOKENS -> completionTokens(node, index, where);
      case CONVERSATIONAL -> throw where.error(DatasetReader.PREPARE_HINT);
    };
  }

  private static TokenizedCompletion completionTokens(JsonNode node, long index, Where where) {
    int[] ids = ids(node, "input_ids", where, false);
    int[] mask = ids(node, "completion_mask", where, false);
    try {
      return new TokenizedCompletion(index, ids, mask);
    } catch (IllegalArgumentException e) {
      throw where.error(e.getMessage());
    }
  }

  private static String text(JsonNode node, String field, Where where) {
    JsonNode value = node.get(field);
    if (value == null) {
      throw where.error("field '" + field + "' is missing, expected a string");
    }
    if (!value.isTextual()) {
      if (value.isArray() && !field.equals("text")) {
        throw where.error(
            "field '" + field + "' is a list of messages: " + DatasetReader.PREPARE_HINT);
      }
      throw where.error("field '" + field + "' is " + value.getNodeType() + ", expected a string");
    }
    return value.textValue();
  }

  private static int[] ids(JsonNode node, String field, Where where, boolean mayBeEmpty) {
    JsonNode value = node.get(field);
    if (value == null) {
      throw where.error("field '" + field + "' is missing, expected a list of token ids");
    }
    if (!value.isArray()) {
      throw where.error(
          "field '" + field + "' is " + value.getNodeType() + ", expected a list of token ids");
    }
    if (value.isEmpty() && !mayBeEmpty) {
      throw where.error("field '" + field + "' is empty, expected at least one token id");
    }
    int[] ids = new int[value.size()];
    for (int i = 0; i < ids.length; i++) {
      JsonNode id = value.get(i);
      if (!id.canConvertToInt() || !id.isIntegralNumber() || id.intValue() < 0) {
        throw where.error(
            String.format(
                "field '%s' element %d is %s, expected a token id >= 0", field, i, id.toString()));
      }
      ids[i] = id.intValue();
    }
    return ids;
  }
}
