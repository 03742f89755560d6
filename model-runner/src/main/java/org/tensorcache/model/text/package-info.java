/** Tokenization: a deterministic byte-level tokenizer with a few special tokens. */
package org.tensorcache.model.text;
