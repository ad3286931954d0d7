/**
 * The names of a statement's output columns in emitted SQL: the one part of the emitter's output
 * the database layer relies on (it decodes rows and bounds their bytes by these names), so it is
 * its own module and run/ never imports the emitter itself.
 */
export function outputName(index: number): string {
  return `c${index}`;
}
