{
  "targets": [
    {
      "target_name": "tartan_kernels",
      "sources": ["kernels.c"],
      "cflags": ["-O3", "-std=c11", "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "cflags!": ["-O2"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3", "-ffp-contract=off"] }
    }
  ]
}
