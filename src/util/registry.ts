// The one shape every plug-in registry has (index kinds, backends, stages, readers, tasks, encoders,
// quantizers): a descriptor with a name, a version and the seam's factory, kept in one Registry per seam
// that looks descriptors up by name and names the known ones when a name is unknown. A new plug-in is
// its descriptor plus one line in its seam's registry; the seam's contract test suite walks the same
// registry, so a plug-in without a contract case fails a guard test.

/** What every plug-in descriptor has; each seam adds its factory (build, open, create, …). */
export interface Descriptor {
  /** The name a flag, a manifest or a location gives. */
  readonly name: string;
  /** The version of what it writes or reads (an index kind's format version; 1 for a plug-in that stores nothing). */
  readonly version: number;
  /** One line on what it is, for `--help` and error messages. */
  readonly summary?: string;
}

/** The descriptors of one seam, by name. */
export class Registry<D extends Descriptor> {
  readonly #byName = new Map<string, D>();

  /** `seam` names the registry in errors ("index kind", "backend", "reader", …). */
  constructor(
    readonly seam: string,
    descriptors: readonly D[] = [],
  ) {
    for (const d of descriptors) this.register(d);
  }

  /** Adds `d`; throws when its name is taken. */
  register(d: D): D {
    if (this.#byName.has(d.name)) throw new Error(`${this.seam} ${JSON.stringify(d.name)} is registered twice`);
    if (!Number.isInteger(d.version) || d.version < 1) throw new Error(`${this.seam} ${JSON.stringify(d.name)}: version must be a positive integer, got ${String(d.version)}`);
    this.#byName.set(d.name, d);
    return d;
  }

  /** Whether a descriptor called `name` is registered. */
  has(name: string): boolean {
    return this.#byName.has(name);
  }

  /** The descriptor called `name`, or undefined. */
  find(name: string): D | undefined {
    return this.#byName.get(name);
  }

  /** The descriptor called `name`; throws naming `where` (a file, a flag) and the known names when there is none. */
  get(name: string, where?: string): D {
    const d = this.#byName.get(name);
    if (d === undefined) throw new Error(`${where === undefined ? "" : `${where}: `}unknown ${this.seam} ${JSON.stringify(name)} (known: ${this.names().join(", ")})`);
    return d;
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.#byName.keys()];
  }

  /** The registered descriptors, in registration order. */
  all(): D[] {
    return [...this.#byName.values()];
  }
}
