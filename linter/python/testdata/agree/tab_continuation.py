if True:
	x = foo(1,
		2)
	y = [
		1,
			2,
	]
	z = {
			"a": 1,
	}
