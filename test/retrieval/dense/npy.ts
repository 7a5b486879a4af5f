// Test helper: a float32 `.npy` file's bytes (version 1.0 header, C order) for rows × dim values.

export function npyBytes(rows: number, dim: number, values: Float32Array | Uint8Array, descr = "<f4", fortran = false): Buffer {
  let h = `{'descr': '${descr}', 'fortran_order': ${fortran ? "True" : "False"}, 'shape': (${rows}, ${dim}), }`;
  while ((10 + h.length + 1) % 64 !== 0) h += " ";
  h += "\n";
  const head = Buffer.alloc(10);
  head.writeUInt8(0x93, 0);
  head.write("NUMPY", 1, "latin1");
  head.writeUInt8(1, 6);
  head.writeUInt16LE(h.length, 8);
  return Buffer.concat([head, Buffer.from(h, "latin1"), Buffer.from(values.buffer, values.byteOffset, values.byteLength)]);
}
