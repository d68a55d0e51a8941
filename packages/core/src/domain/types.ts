/**
 * `Omit` that keeps the known keys of a type with an index signature. The schema types are zod
 * `looseObject`s (`{ [x: string]: unknown } & known keys`), and the built-in `Omit` turns those into
 * a bare index signature, losing every known key.
 */
export type OmitKnown<T, K extends PropertyKey> = { [P in keyof T as P extends K ? never : P]: T[P] };
