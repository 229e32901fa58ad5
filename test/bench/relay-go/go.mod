module kperturb.dev/bench/relay-go

go 1.22
