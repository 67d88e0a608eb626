package hook

// Served is how many requests this process's hook server answered.
func Served() int64 { return served.Load() }

// Adapters is how many clients have an adapter.
func Adapters() int { return len(adapters) }
