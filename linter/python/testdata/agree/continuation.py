result = some_function_that_takes_arguments('a', 'b', 'c',
    'd', 'e', 'f')
foo = long_function_name(var_one, var_two,
                         var_three, var_four)
print("hello", (
    "there",
     "dude"))
if (a or
    b):
    pass
rv = dict(
    a=1,
      b=2,
  c=3)
troublesome = dict(a=1,
                   b=[1,
                      2],
    c=3
                   )
parser.add_argument('--flag', action='store_true',
                        help="too far")
x = ('abc'
     'def'
        'ghi')
assert x in (1,
    2)
raise ValueError("a"
                 "b",
          1)
d = {
    'key': [
        1, 2,
    ],
        'other': 3,
    }
if foo is None and bar == "frop" and \
        blah == 'yeah':
    blah = 'yeahnah'
value = (1 +
         2 -
  3)
call(a, b, lambda c: (
    c + 1),
     d)
with open('a') as a, \
     open('b') as b:
    pass
print('é', ('ü',
            'x'),
      'ÿ')
def long_function_name(
        var_one, var_two, var_three,
        var_four):
    print(var_one)
foo = long_function_name(
  var_one, var_two,
  var_three, var_four)
my_list = [
    1, 2, 3,
    4, 5, 6,
    ]
rv.update(dict.fromkeys((
    'qualified_name', 'mode'), 1),
          other=2)
