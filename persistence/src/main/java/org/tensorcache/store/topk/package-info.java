/**
 * The compact encoding of a distillation teacher's per-token output: for every completion token,
 * the top-K next-token ids, their log-probs and the log-probability outside them.
 */
package org.tensorcache.store.topk;
