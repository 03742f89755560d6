/**
 * How examples are grouped into forward passes: by rows for the built-in model, by padded tokens
 * under a token budget and a memory bound for a user's model. Every grouping is a pure function of
 * the rows and the settings, so an example's bits never depend on who asked for it.
 */
package org.tensorcache.model.batch;
