package org.tensorcache.model.data;

/** A text prompt-completion row {@code {"prompt", "completion"}}, as TRL's SFT trainer takes. */
public record CompletionExample(long index, String prompt, String completion) implements Example {}
