/**
 * The model's types for the page's scripts, from the CLI project through `import()` types (erased at
 * compile time: the page has no imports at run time). Global to the page's project, like every
 * declaration of its scripts.
 */
/* exported InspectModel, InspectMessageItem, InspectEventItem, InspectSpan, InspectFinding */
/** The model embedded in the page. */
type InspectModel = import('../build-inspect-model.js').InspectModel
/** A message version on the timeline. */
type InspectMessageItem = import('../build-inspect-model.js').InspectMessageItem
/** A non-message event on the timeline. */
type InspectEventItem = import('../build-inspect-model.js').InspectEventItem
/** A rewind or compaction: the messages it covers. */
type InspectSpan = import('../build-inspect-model.js').InspectSpan
/** An audit finding of the model. */
type InspectFinding = InspectModel['findings'][number]
