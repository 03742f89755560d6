/**
 * A user's own Hugging Face model: the model directory (TorchScript file, tokenizer, what the
 * exporter knew), DJL's Hugging Face tokenizer, TRL's tokenization and truncation of preference
 * rows, and the checks that every row fits the model before anything is computed.
 */
package org.tensorcache.model.hf;
