package org.tensorcache.model.data;

/** A text row {@code {"text"}}, the input of a feature (embedding) runner. */
public record DocumentExample(long index, String text) implements Example {}
