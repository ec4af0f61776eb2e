/**
 * A result's fields as data, checked against its type by the compiler: every key of the type appears,
 * `"required"` exactly where the type requires it, no key the type lacks. It lets a test (or a cautious
 * client) check an answer from the wire against the declaration without a schema library.
 */

/** Whether a field is always present (`"required"`) or may be left out (`"optional"`). */
export type Presence = "required" | "optional";

/** The keys of any variant of `T` (`T` may be a union of the shapes one method answers with). */
type KeysOf<T> = T extends unknown ? keyof T & string : never;

/** `"optional"` when some variant of `T` lacks `K` or declares it optional, else `"required"`. */
type PresenceOf<T, K extends string> = "optional" extends (
  T extends unknown
    ? K extends keyof T
      ? // biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` is the standard test for "K is optional in T".
        {} extends Pick<T, K>
        ? "optional"
        : "required"
      : "optional"
    : never
)
  ? "optional"
  : "required";

/** The type of `K` in the variants of `T` that have it. */
type ValueOf<T, K extends string> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;

/** An array's element type; any other type as is. */
type ItemOf<V> = V extends readonly (infer E)[] ? E : V;

/**
 * One field: its presence, or, for an object (or array of objects), its presence and the fields of that
 * object (of each element). A `null` value is never looked into.
 */
export type FieldSpec<V, P extends Presence> =
  | P
  | (ObjectOf<V> extends object ? { readonly presence: P; readonly fields: Fields<ObjectOf<V>> } : never);

/** The object a field holds (each element's, for an array), without null. */
type ObjectOf<V> = NonNullable<ItemOf<NonNullable<V>>>;

/** Every field of `T` (of all its variants, when a union) with its {@link FieldSpec}. */
export type Fields<T> = { readonly [K in KeysOf<T>]-?: FieldSpec<ValueOf<T, K>, PresenceOf<T, K>> };
