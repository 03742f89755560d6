/**
 * A cache job on a user's own model: opens the model directory, turns the data set into the
 * tokenized rows the runner takes (checking every row first), and makes the runners, which share
 * one loaded model; {@link org.tensorcache.model.usermodel.TeacherModel} does the same for a
 * distillation teacher's per-token top-K.
 */
package org.tensorcache.model.usermodel;
