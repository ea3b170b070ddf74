{
  "targets": [
    {
      "target_name": "schnorr",
      "sources": ["schnorr.c"],
      "libraries": ["-lsecp256k1"],
      "cflags": ["-O2"]
    }
  ]
}
