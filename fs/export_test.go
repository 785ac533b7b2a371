package fs

// BinaryProbe exports binaryProbe to the tests.
const BinaryProbe = binaryProbe
