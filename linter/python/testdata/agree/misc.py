x = 1
y = x$2
z = `x`
w = 'unterminated
v = "ok"
u = 0x_1 + 1_000 + 0o17 + 0b1 + 1e5 + 1.5j + .5 + 1. + 0777
t = rb'x' + br"y" + Rb'z' + f"{x}" + fr'{x}' + u'x'
s = ur'x'
q = x if x else\
    y
p = [1,
     2,]
def f(a, /, b):
    return a
def g(*, a):
    return a -1
o = x->y
n = x <> y
m = x := 1
l = -x
k = x[-1:]
j = f(*x, **x)
i = x[a:b, c:d]
print(x, file=None)
print >>x, y
h = x ** -y
g = yield
e = x.y(z)[0]
d = {**x}
c = x if not x else(y)
b = [x for x in(y)]
a = x!= y
