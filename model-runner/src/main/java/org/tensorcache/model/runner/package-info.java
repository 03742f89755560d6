/**
 * Runners that turn batches of examples into checked, named tensors: per example ({@link
 * org.tensorcache.model.runner.RunnerOutput}) or per trained token ({@link
 * org.tensorcache.model.runner.TokenOutput}, a distillation teacher's top-K).
 */
package org.tensorcache.model.runner;
