package spec

// MaxRepeat bounds --repeat.
const MaxRepeat = 100
