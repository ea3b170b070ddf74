// The addon node-gyp built at install (schnorr.c); loading throws when it was not built.
module.exports = require('./build/Release/schnorr.node');
