package hook

// Served is how many requests this process's hook server answered.
func Served() int64 { return served.Load() }
