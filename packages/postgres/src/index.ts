/** @packageDocumentation */
export {}
