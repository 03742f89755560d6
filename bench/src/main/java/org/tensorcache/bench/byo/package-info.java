/**
 * The bring-your-own-model benchmark ({@code bench --only byo}): a seeded Hugging Face Llama
 * exported to TorchScript, filled through the embedded node next to a bare DJL loop and to PyTorch
 * eager mode in Python, with the values of all three compared.
 */
package org.tensorcache.bench.byo;
