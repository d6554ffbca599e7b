package python

// code indexes the rules this package implements.
type code uint8

const (
	cE101 code = iota
	cE111
	cE112
	cE113
	cE114
	cE115
	cE116
	cE117
	cE121
	cE122
	cE123
	cE124
	cE125
	cE126
	cE127
	cE128
	cE129
	cE131
	cE133
	cE201
	cE202
	cE203
	cE211
	cE221
	cE222
	cE223
	cE224
	cE225
	cE226
	cE227
	cE228
	cE231
	cE241
	cE242
	cE251
	cE252
	cE261
	cE262
	cE265
	cE266
	cE271
	cE272
	cE273
	cE274
	cE275
	cE301
	cE302
	cE303
	cE304
	cE305
	cE306
	cE401
	cE402
	cE501
	cE502
	cE701
	cE702
	cE703
	cE704
	cE711
	cE712
	cE713
	cE714
	cE721
	cE722
	cE731
	cE741
	cE742
	cE743
	cE901
	cE902
	cW191
	cW291
	cW292
	cW293
	cW391
	cW503
	cW504
	cW505
	cW605
	cW606
	numCodes
)

// codeNames is indexed by code.
var codeNames = [numCodes]string{
	"E101", "E111", "E112", "E113", "E114", "E115", "E116", "E117",
	"E121", "E122", "E123", "E124", "E125", "E126", "E127", "E128", "E129", "E131", "E133",
	"E201", "E202", "E203", "E211",
	"E221", "E222", "E223", "E224", "E225", "E226", "E227", "E228",
	"E231", "E241", "E242", "E251", "E252",
	"E261", "E262", "E265", "E266",
	"E271", "E272", "E273", "E274", "E275",
	"E301", "E302", "E303", "E304", "E305", "E306",
	"E401", "E402", "E501", "E502",
	"E701", "E702", "E703", "E704",
	"E711", "E712", "E713", "E714", "E721", "E722", "E731", "E741", "E742", "E743",
	"E901", "E902",
	"W191", "W291", "W292", "W293", "W391", "W503", "W504", "W505", "W605", "W606",
}

// enabledSet records which codes a Config enables, computed once in New.
type enabledSet [numCodes]bool

// any reports whether one of cs is enabled.
func (e *enabledSet) any(cs ...code) bool {
	for _, c := range cs {
		if e[c] {
			return true
		}
	}
	return false
}
