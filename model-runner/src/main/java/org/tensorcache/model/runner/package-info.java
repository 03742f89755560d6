/** Runners that turn batches of examples into checked, named per-example tensors. */
package org.tensorcache.model.runner;
