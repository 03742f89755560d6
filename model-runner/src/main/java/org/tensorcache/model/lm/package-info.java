/** The small causal language model used as reference model, built from DJL blocks. */
package org.tensorcache.model.lm;
