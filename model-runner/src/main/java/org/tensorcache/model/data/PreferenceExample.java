package org.tensorcache.model.data;

/** A text preference row {@code {"prompt", "chosen", "rejected"}}. */
public record PreferenceExample(long index, String prompt, String chosen, String rejected)
    implements Example {}
