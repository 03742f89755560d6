package org.tensorcache.model.data;

/** One preference example; {@code index} is its 0-based line number in the data set. */
public record PreferenceExample(long index, String prompt, String chosen, String rejected) {}
