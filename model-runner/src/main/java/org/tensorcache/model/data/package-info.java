/**
 * Data sets: rows of text or token-id preferences, prompt-completion and tokenized
 * language-modeling rows, and texts; a streaming JSONL reader (plain or gzip) with digests, and a
 * seeded synthetic generator.
 */
package org.tensorcache.model.data;
